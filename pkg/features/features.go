// Package features describes the feature gates of the kube-apiserver
// version kapi follows. kapi has no feature gates of its own: it behaves
// as kube-apiserver with every gate at its default (docs/compatibility.md,
// "Feature gates"), and serves, as kube-apiserver does at start
// (component-base featuregate's AddMetrics), one kubernetes_feature_enabled
// series per gate with that default.
package features

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Gate is one feature gate at its default.
type Gate struct {
	Name string
	// Stage is the gate's pre-release stage at its default: "" once GA,
	// or ALPHA, BETA, DEPRECATED.
	Stage string
	// Default is whether the gate is on by default.
	Default bool
}

// Defaults returns kube-apiserver v1.37.2's feature gates, by name.
func Defaults() []Gate {
	return append([]Gate(nil), defaults...)
}

// RegisterMetrics registers kubernetes_feature_enabled{name,stage} on reg
// with one series per gate: 1 if the gate is on by default, else 0.
//
// The family is the same for every server of a process and never changes
// (kapi's gates are at their defaults): every registry gets the one
// collector, made on first use, rather than a GaugeVec of its own with a
// child per gate (~2,850 allocations per server start).
func RegisterMetrics(reg prometheus.Registerer) error {
	return reg.Register(enabledMetric())
}

var enabledMetric = sync.OnceValue(func() prometheus.Collector {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kubernetes_feature_enabled",
		Help: "[BETA] This metric records the data about the stage and enablement of a k8s feature.",
	}, []string{"name", "stage"})
	for _, f := range defaults {
		v := 0.0
		if f.Default {
			v = 1
		}
		g.WithLabelValues(f.Name, f.Stage).Set(v)
	}
	return g
})
