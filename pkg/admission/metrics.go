package admission

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The type label of the admission steps, as upstream spells them.
const (
	stepAdmit    = "admit"
	stepValidate = "validate"
)

// admissionBuckets are 5 ms to 2.5 s, as upstream's step and controller
// histograms (k8s.io/apiserver pkg/admission/metrics/metrics.go, STABLE in
// test/instrumentation/testdata/stable-metrics-list.yaml).
var admissionBuckets = []float64{0.005, 0.025, 0.1, 0.5, 1.0, 2.5}

// Metrics are the admission metrics of one server: the latency of each
// admission step (apiserver_admission_step_admission_duration_seconds and
// its _summary) and of each plugin
// (apiserver_admission_controller_admission_duration_seconds). A nil
// *Metrics records nothing; methods are safe for concurrent use.
type Metrics struct {
	step        *prometheus.HistogramVec
	stepSummary *prometheus.SummaryVec
	controller  *prometheus.HistogramVec

	// observers holds the series already observed, so that each admission
	// step does not hash and validate its label values again (a
	// WithLabelValues per plugin per step was ~1.5% of an update's CPU).
	// Copy on write: reads are one atomic load and a map lookup; a series
	// is added (under mu) the first time it is observed, so /metrics shows
	// exactly the series it showed before.
	observers atomic.Pointer[map[seriesKey]observers]
	mu        sync.Mutex
}

// seriesKey names one series of the step metrics or (controller) of the
// controller metric.
type seriesKey struct {
	controller bool
	name, step string
	op         Operation
	rejected   bool
}

// observers are the series one seriesKey observes into: the controller
// histogram, or the step histogram and summary.
type observers struct {
	histogram, summary prometheus.Observer
}

// NewMetrics creates the admission metrics and registers them on reg (nil:
// not registered).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		step: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_admission_step_admission_duration_seconds",
			Help:    "[STABLE] Admission sub-step latency histogram in seconds, broken out for each operation and API resource and step type (validate or admit).",
			Buckets: admissionBuckets,
		}, []string{"type", "operation", "rejected"}),
		// Upstream's summary has no objectives (only _sum and _count);
		// MaxAge is its 5h.
		stepSummary: prometheus.NewSummaryVec(prometheus.SummaryOpts{
			Name:   "apiserver_admission_step_admission_duration_seconds_summary",
			Help:   "[ALPHA] Admission sub-step latency summary in seconds, broken out for each operation and API resource and step type (validate or admit).",
			MaxAge: 5 * time.Hour,
		}, []string{"type", "operation", "rejected"}),
		controller: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_admission_controller_admission_duration_seconds",
			Help:    "[STABLE] Admission controller latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
			Buckets: admissionBuckets,
		}, []string{"name", "type", "operation", "rejected"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.step, m.stepSummary, m.controller} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("register admission metrics: %w", err)
			}
		}
	}
	return m, nil
}

func (m *Metrics) observeStep(step string, op Operation, rejected bool, elapsed time.Duration) {
	o := m.series(seriesKey{step: step, op: op, rejected: rejected})
	o.histogram.Observe(elapsed.Seconds())
	o.summary.Observe(elapsed.Seconds())
}

func (m *Metrics) observeController(name, step string, op Operation, rejected bool, elapsed time.Duration) {
	m.series(seriesKey{controller: true, name: name, step: step, op: op, rejected: rejected}).histogram.Observe(elapsed.Seconds())
}

// series returns the observers of k, creating its series on first use.
func (m *Metrics) series(k seriesKey) observers {
	if cur := m.observers.Load(); cur != nil {
		if o, ok := (*cur)[k]; ok {
			return o
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.observers.Load()
	if cur != nil {
		if o, ok := (*cur)[k]; ok {
			return o
		}
	}
	r := strconv.FormatBool(k.rejected)
	var o observers
	if !k.controller {
		o = observers{
			histogram: m.step.WithLabelValues(k.step, string(k.op), r),
			summary:   m.stepSummary.WithLabelValues(k.step, string(k.op), r),
		}
	} else {
		o = observers{histogram: m.controller.WithLabelValues(k.name, k.step, string(k.op), r)}
	}
	next := make(map[seriesKey]observers, 1)
	if cur != nil {
		next = make(map[seriesKey]observers, len(*cur)+1)
		for key, v := range *cur {
			next[key] = v
		}
	}
	next[k] = o
	m.observers.Store(&next)
	return o
}
