package metrics

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// Component is the value of the component label for this server's requests.
const Component = "apiserver"

// Request kinds of apiserver_current_inflight_requests.
const (
	ReadOnlyKind = "readOnly"
	MutatingKind = "mutating"
)

// Metrics are the request metrics of one server. A nil *Metrics is valid and
// records nothing.
type Metrics struct {
	requests           *prometheus.CounterVec
	latencies          *prometheus.HistogramVec
	inflight           *prometheus.GaugeVec
	tlsHandshakeErrors prometheus.Counter
}

// New creates the metrics and registers them on reg (nil: not registered).
// Registering twice on one registry fails.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_request_total",
			Help: "Counter of apiserver requests broken out for each verb, group, version, resource, subresource, scope, component, and HTTP response code.",
		}, []string{"verb", "group", "version", "resource", "subresource", "scope", "component", "code"}),
		latencies: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "apiserver_request_duration_seconds",
			Help: "Response latency distribution in seconds for each verb, group, version, resource, subresource, scope and component.",
			Buckets: []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3,
				4, 5, 6, 8, 10, 15, 20, 30, 45, 60},
		}, []string{"verb", "group", "version", "resource", "subresource", "scope", "component"}),
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_current_inflight_requests",
			Help: "Number of requests currently being served, by request kind (readOnly or mutating).",
		}, []string{"request_kind"}),
		tlsHandshakeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "apiserver_tls_handshake_errors_total",
			Help: "Number of requests dropped with 'TLS handshake error from' error",
		}),
	}
	m.inflight.WithLabelValues(ReadOnlyKind).Set(0)
	m.inflight.WithLabelValues(MutatingKind).Set(0)
	if reg != nil {
		for _, c := range []prometheus.Collector{m.requests, m.latencies, m.inflight, m.tlsHandshakeErrors} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("register apiserver request metrics: %w", err)
			}
		}
	}
	return m, nil
}

// SetInflight sets the in-flight gauge of kind (ReadOnlyKind or MutatingKind).
func (m *Metrics) SetInflight(kind string, n int) {
	if m == nil {
		return
	}
	m.inflight.WithLabelValues(kind).Set(float64(n))
}

// TLSHandshakeError counts one failed TLS handshake.
func (m *Metrics) TLSHandshakeError() {
	if m == nil {
		return
	}
	m.tlsHandshakeErrors.Inc()
}

// RecordRequest counts one finished request. info may be nil. The latency is
// not observed for WATCH and CONNECT (long-lived by nature), as upstream.
func (m *Metrics) RecordRequest(r *http.Request, info *request.RequestInfo, code int, elapsed time.Duration) {
	if m == nil {
		return
	}
	verb := CanonicalVerb(r, info)
	var group, version, resource, subresource, scope string
	if info != nil && info.IsResourceRequest {
		group, version, resource, subresource = info.APIGroup, info.APIVersion, info.Resource, info.Subresource
		scope = Scope(info)
	}
	m.requests.WithLabelValues(verb, group, version, resource, subresource, scope, Component, strconv.Itoa(code)).Inc()
	if verb != "WATCH" && verb != "CONNECT" {
		m.latencies.WithLabelValues(verb, group, version, resource, subresource, scope, Component).Observe(elapsed.Seconds())
	}
}

// CanonicalVerb is the verb label upstream reports: the HTTP method, with
// collection GETs as LIST, watches as WATCH, apply patches as APPLY and
// connect-style subresources as CONNECT.
func CanonicalVerb(r *http.Request, info *request.RequestInfo) string {
	method := strings.ToUpper(r.Method)
	if info == nil || !info.IsResourceRequest {
		return method
	}
	switch info.Verb {
	case "list":
		return "LIST"
	case "watch":
		return "WATCH"
	case "proxy":
		return "CONNECT"
	}
	switch info.Subresource {
	case "attach", "exec", "portforward", "proxy":
		return "CONNECT"
	}
	if method == http.MethodPatch && r.Header.Get("Content-Type") == "application/apply-patch+yaml" {
		return "APPLY"
	}
	return method
}

// Scope is the scope label: "resource" for a named object, "namespace" for a
// namespaced collection, "cluster" otherwise.
func Scope(info *request.RequestInfo) string {
	switch {
	case info.Name != "":
		return "resource"
	case info.Namespace != "":
		return "namespace"
	default:
		return "cluster"
	}
}
