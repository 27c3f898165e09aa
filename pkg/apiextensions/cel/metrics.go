package cel

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the families kube-apiserver v1.37.2 records about CRD
// validation rules: apiserver_cel_compilation_duration_seconds and
// apiserver_cel_evaluation_duration_seconds (k8s.io/apiserver
// pkg/cel/metrics, observed only by apiextensions-apiserver's
// x-kubernetes-validations code, not by admission policies), and
// apiextensions_apiserver_validation_ratcheting_seconds
// (apiextensions-apiserver pkg/apiserver/validation).
//
// Upstream observes them as follows, and kapi where it does the same work:
//
//   - compilation, once per schema node a rule compilation is asked for:
//     when a CRD is created or updated (not through /status), once per
//     node with rules of each version's schema, whether it changed or
//     not; when a version's custom resources are first served (upstream:
//     on the first request after the CRD's spec or accepted names
//     changed), once per node of the schema the validator is built over
//     (every node its properties, items and additionalProperties reach,
//     rules or not), if the schema has rules at all;
//   - evaluation, once per validator node an object's validation visits
//     (the root and every node with rules at or below it that the object
//     has a value for, per list item), whenever the rules run (create,
//     update, /status and /scale updates without a blocking error);
//   - ratcheting, once per update of a custom resource (main resource,
//     /status, /scale), rules or not, with the time spent comparing new
//     values with old ones to ratchet errors.
//
// A nil *Metrics records nothing.
type Metrics struct {
	compilation, evaluation, ratcheting prometheus.Histogram
}

// NewMetrics creates the three families and registers them on reg (nil:
// not registered).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		compilation: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "apiserver_cel_compilation_duration_seconds",
			Help:    "[BETA] CEL compilation time in seconds.",
			Buckets: prometheus.DefBuckets,
		}),
		evaluation: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "apiserver_cel_evaluation_duration_seconds",
			Help:    "[BETA] CEL evaluation time in seconds.",
			Buckets: prometheus.DefBuckets,
		}),
		ratcheting: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "apiextensions_apiserver_validation_ratcheting_seconds",
			Help:    "[ALPHA] Time for comparison of old to new for the purposes of CRDValidationRatcheting during an UPDATE in seconds.",
			Buckets: prometheus.ExponentialBuckets(1e-05, 4, 10),
		}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.compilation, m.evaluation, m.ratcheting} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

func (m *Metrics) observeCompilation(d time.Duration) {
	if m != nil {
		m.compilation.Observe(d.Seconds())
	}
}

func (m *Metrics) observeEvaluation(d time.Duration) {
	if m != nil {
		m.evaluation.Observe(d.Seconds())
	}
}

// ObserveRatcheting records the time one update of a custom resource
// spent comparing new values with old ones for ratcheting.
func (m *Metrics) ObserveRatcheting(d time.Duration) {
	if m != nil {
		m.ratcheting.Observe(d.Seconds())
	}
}

// Options are how NewValidatorWithOptions compiles.
type Options struct {
	// Metrics records the compilations and, for the validator returned,
	// its evaluations (nil: none).
	Metrics *Metrics
	// Serving says the validator is built to serve custom resources:
	// compilation is observed for every schema node upstream's validator
	// is built over, not only for the nodes with rules (the CRD
	// validation's).
	Serving bool
}
