package server

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
)

// versionCollector serves the version metrics every Kubernetes component
// registers (k8s.io/component-base metrics/prometheus/version and
// compatversion, v0.37): kubernetes_build_info and version_info, both a
// constant 1 labelled with the version the server reports. It reads the
// version at each scrape, so a version changed after the collector was
// registered (kapitest's WithKubernetesVersion) is the one shown, as
// /version shows it.
type versionCollector struct {
	info                  func() *apimachineryversion.Info
	binary                string
	buildInfo, compatInfo *prometheus.Desc
}

// NewVersionCollector returns the collector; info is read at each scrape,
// binary is the Kubernetes version the binary implements ("1.37.2").
func NewVersionCollector(info func() *apimachineryversion.Info, binary string) prometheus.Collector {
	return &versionCollector{
		info:   info,
		binary: binary,
		buildInfo: prometheus.NewDesc("kubernetes_build_info",
			"[BETA] A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running.",
			[]string{"major", "minor", "git_version", "git_commit", "git_tree_state", "build_date", "go_version", "compiler", "platform"}, nil),
		compatInfo: prometheus.NewDesc("version_info",
			"[ALPHA] Provides the compatibility version info of the component. The component label is the name of the component, usually kube, but is relevant for aggregated-apiservers.",
			[]string{"component", "binary", "emulation", "min_compat"}, nil),
	}
}

func (c *versionCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.buildInfo
	ch <- c.compatInfo
}

func (c *versionCollector) Collect(ch chan<- prometheus.Metric) {
	v := c.info()
	if v == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.buildInfo, prometheus.GaugeValue, 1,
		v.Major, v.Minor, v.GitVersion, v.GitCommit, v.GitTreeState, v.BuildDate, v.GoVersion, v.Compiler, v.Platform)
	// Upstream's emulation is the emulated major.minor (what /version
	// reports as major and minor), min_compat the oldest version it
	// stays compatible with.
	ch <- prometheus.MustNewConstMetric(c.compatInfo, prometheus.GaugeValue, 1,
		"kube", c.binary, fmt.Sprintf("%s.%s", v.Major, v.Minor), minCompat(v))
}

func minCompat(v *apimachineryversion.Info) string {
	if v.MinCompatibilityMajor == "" {
		return ""
	}
	return v.MinCompatibilityMajor + "." + v.MinCompatibilityMinor
}
