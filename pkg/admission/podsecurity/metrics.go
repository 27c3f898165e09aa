package podsecurity

import (
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/version"
)

// Metrics are upstream's PodSecurity metrics (k8s.io/pod-security-admission
// metrics/metrics.go, v1.37): names, help, labels and the series created
// at registration.
type Metrics struct {
	evaluations *prometheus.CounterVec
	exemptions  *prometheus.CounterVec
	errors      *prometheus.CounterVec
}

// Decisions and modes, as upstream labels them.
const (
	decisionAllow = "allow"
	decisionDeny  = "deny"
	modeEnforce   = "enforce"
	modeAudit     = "audit"
	modeWarn      = "warn"
)

// NewMetrics registers the metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		evaluations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pod_security_evaluations_total",
			Help: "[ALPHA] Number of policy evaluations that occurred, not counting ignored or exempt requests.",
		}, []string{"decision", "policy_level", "policy_version", "mode", "request_operation", "resource", "subresource"}),
		exemptions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pod_security_exemptions_total",
			Help: "[ALPHA] Number of exempt requests, not counting ignored or out of scope requests.",
		}, []string{"request_operation", "resource", "subresource"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pod_security_errors_total",
			Help: "[ALPHA] Number of errors preventing normal evaluation. Non-fatal errors may result in the latest restricted profile being used for evaluation.",
		}, []string{"fatal", "request_operation", "resource", "subresource"}),
	}
	for _, c := range []prometheus.Collector{m.evaluations, m.exemptions, m.errors} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	// The series upstream caches (populateCache), present from the start.
	for _, op := range []string{"create", "update"} {
		m.evaluations.WithLabelValues(decisionAllow, string(LevelPrivileged), "latest", modeEnforce, op, "pod", "")
		m.exemptions.WithLabelValues(op, "pod", "")
		m.exemptions.WithLabelValues(op, "controller", "")
	}
	return m, nil
}

func (m *Metrics) evaluation(decision string, lv LevelVersion, mode string, a *admission.Attributes) {
	if m == nil {
		return
	}
	// Privileged is always effectively latest; a version newer than the
	// server's is "future".
	v := lv.Version.String()
	switch {
	case lv.Version.latest || lv.Level == LevelPrivileged:
		v = "latest"
	case lv.Version.minor > version.KubeMinor:
		v = "future"
	}
	m.evaluations.WithLabelValues(decision, string(lv.Level), v, mode, operationLabel(a.Operation), resourceLabel(a), a.Subresource).Inc()
}

func (m *Metrics) exemption(a *admission.Attributes) {
	if m != nil {
		m.exemptions.WithLabelValues(operationLabel(a.Operation), resourceLabel(a), a.Subresource).Inc()
	}
}

func (m *Metrics) error(fatal bool, a *admission.Attributes) {
	if m != nil {
		m.errors.WithLabelValues(strconv.FormatBool(fatal), operationLabel(a.Operation), resourceLabel(a), a.Subresource).Inc()
	}
}

// resourceLabel: pod, namespace, or controller for any other resource.
func resourceLabel(a *admission.Attributes) string {
	switch a.Resource.GroupResource() {
	case podsResource:
		return "pod"
	case namespacesResource:
		return "namespace"
	}
	return "controller"
}

func operationLabel(op admission.Operation) string { return strings.ToLower(string(op)) }
