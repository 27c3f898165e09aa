package admission

import (
	"fmt"
	"strconv"
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
	r := strconv.FormatBool(rejected)
	m.step.WithLabelValues(step, string(op), r).Observe(elapsed.Seconds())
	m.stepSummary.WithLabelValues(step, string(op), r).Observe(elapsed.Seconds())
}

func (m *Metrics) observeController(name, step string, op Operation, rejected bool, elapsed time.Duration) {
	m.controller.WithLabelValues(name, step, string(op), strconv.FormatBool(rejected)).Observe(elapsed.Seconds())
}
