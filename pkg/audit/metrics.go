package audit

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// PluginLog is the plugin label of the log backend's errors.
const PluginLog = "log"

// Metrics are the audit metrics of one server, as upstream's
// (k8s.io/apiserver pkg/audit/metrics.go): events generated, events lost by
// a backend, the policy level of each request, and requests rejected
// because their audit event could not be stored. A nil *Metrics records
// nothing; methods are safe for concurrent use.
type Metrics struct {
	events   prometheus.Counter     // apiserver_audit_event_total
	errors   *prometheus.CounterVec // apiserver_audit_error_total
	levels   *prometheus.CounterVec // apiserver_audit_level_total
	rejected prometheus.Counter     // apiserver_audit_requests_rejected_total
}

// NewMetrics creates the audit metrics and registers them on reg (nil: not
// registered).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		events: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "apiserver_audit_event_total",
			Help: "[ALPHA] Counter of audit events generated and sent to the audit backend.",
		}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_audit_error_total",
			Help: "[ALPHA] Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.",
		}, []string{"plugin"}),
		levels: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_audit_level_total",
			Help: "[ALPHA] Counter of policy levels for audit events (1 per request).",
		}, []string{"level"}),
		rejected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "apiserver_audit_requests_rejected_total",
			Help: "[ALPHA] Counter of apiserver requests rejected due to an error in audit logging backend.",
		}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.events, m.errors, m.levels, m.rejected} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("register audit metrics: %w", err)
			}
		}
	}
	return m, nil
}

// observeLevel counts one request evaluated at level l.
func (m *Metrics) observeLevel(l Level) {
	if m != nil {
		m.levels.WithLabelValues(string(l)).Inc()
	}
}

// observeEvent counts one event handed to the backend.
func (m *Metrics) observeEvent() {
	if m != nil {
		m.events.Inc()
	}
}

// PluginError counts n events that plugin failed to record (n 0 creates
// the plugin's series).
func (m *Metrics) PluginError(plugin string, n int) {
	if m != nil && n >= 0 {
		m.errors.WithLabelValues(plugin).Add(float64(n))
	}
}

// RequestRejected counts one request refused because its audit event
// could not be stored.
func (m *Metrics) RequestRejected() {
	if m != nil {
		m.rejected.Inc()
	}
}
