package webhook

import (
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are upstream's webhook admission metrics (k8s.io/apiserver
// pkg/admission/metrics/metrics.go, v1.37). A nil *Metrics records
// nothing.
type Metrics struct {
	duration  *prometheus.HistogramVec
	rejection *prometheus.CounterVec
	requests  *prometheus.CounterVec
	failOpen  *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them on reg (nil: not
// registered).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_admission_webhook_admission_duration_seconds",
			Help:    "[STABLE] Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
			Buckets: []float64{0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25},
		}, []string{"name", "type", "operation", "rejected"}),
		rejection: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_admission_webhook_rejection_count",
			Help: "[ALPHA] Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.",
		}, []string{"name", "type", "operation", "error_type", "rejection_code"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_admission_webhook_request_total",
			Help: "[ALPHA] Admission webhook request total, identified by name and broken out for each admission type (validating or mutating) and operation. Additional labels specify whether the request was rejected or not and an HTTP status code. Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.",
		}, []string{"name", "type", "operation", "code", "rejected"}),
		failOpen: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_admission_webhook_fail_open_count",
			Help: "[ALPHA] Admission webhook fail open count, identified by name and broken out for each admission type (validating or mutating).",
		}, []string{"name", "type"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.duration, m.rejection, m.requests, m.failOpen} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("register webhook metrics: %w", err)
			}
		}
	}
	return m, nil
}

// Error types of the rejection count.
const (
	errCalling  = "calling_webhook_error"
	errInternal = "apiserver_internal_error"
	errNone     = "no_error"
)

func truncCode(code int) string {
	if code > 600 {
		code = 600
	}
	return strconv.Itoa(code)
}

func (m *Metrics) observe(name, typ, op string, rejected bool, code int, elapsed time.Duration) {
	if m == nil {
		return
	}
	r := strconv.FormatBool(rejected)
	m.duration.WithLabelValues(name, typ, op, r).Observe(elapsed.Seconds())
	m.requests.WithLabelValues(name, typ, op, truncCode(code), r).Inc()
}

func (m *Metrics) reject(name, typ, op, errType string, code int) {
	if m == nil {
		return
	}
	m.rejection.WithLabelValues(name, typ, op, errType, truncCode(code)).Inc()
}

func (m *Metrics) failedOpen(name, typ string) {
	if m == nil {
		return
	}
	m.failOpen.WithLabelValues(name, typ).Inc()
}
