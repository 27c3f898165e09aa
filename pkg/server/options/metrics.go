package options

import (
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/version"
)

// MetricsOptions are component-base's metrics flags kapi has:
// --show-hidden-metrics-for-version (not --disabled-metrics,
// --allow-metric-labels or --allow-metric-labels-manifest).
type MetricsOptions struct {
	// ShowHiddenMetricsForVersion, when set, must be the minor before the
	// one kapi implements ("1.36"); the deprecated families hidden in
	// this minor are then served again.
	ShowHiddenMetricsForVersion string
}

// NewMetricsOptions returns the defaults: hidden metrics stay hidden.
func NewMetricsOptions() *MetricsOptions { return &MetricsOptions{} }

// AddFlags adds the metrics flags to fs, with component-base's help.
func (o *MetricsOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ShowHiddenMetricsForVersion, "show-hidden-metrics-for-version", o.ShowHiddenMetricsForVersion,
		"The previous version for which you want to show hidden metrics. "+
			"Only the previous minor version is meaningful, other values will not be allowed. "+
			"The format is <major>.<minor>, e.g.: '1.16'. "+
			"The purpose of this format is make sure you have the opportunity to notice if the next release hides additional metrics, "+
			"rather than being surprised when they are permanently removed in the release after that.")
}

// ShowHidden reports whether the hidden families are to be served.
func (o *MetricsOptions) ShowHidden() bool { return o.ShowHiddenMetricsForVersion != "" }

// Validate accepts only the previous minor of the Kubernetes version kapi
// implements, as kube-apiserver v1.37 does, with its message
// (`metrics.showHiddenMetricsForVersion: Invalid value: "1.35": must be
// omitted or have the value '1.36'; only the previous minor version is
// allowed`).
func (o *MetricsOptions) Validate() []error {
	v := o.ShowHiddenMetricsForVersion
	if v == "" {
		return nil
	}
	valid := fmt.Sprintf("%d.%d", version.KubeMajor, version.KubeMinor-1)
	if v == valid {
		return nil
	}
	return []error{field.Invalid(field.NewPath("metrics", "showHiddenMetricsForVersion"), v,
		fmt.Sprintf("must be omitted or have the value '%s'; only the previous minor version is allowed", valid))}
}
