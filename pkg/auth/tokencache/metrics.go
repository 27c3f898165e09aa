package tokencache

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Label values of the metrics, as upstream's stats.go.
const (
	hit  = "hit"
	miss = "miss"

	fetchOK    = "ok"
	fetchError = "error"

	inFlight = "in_flight"
	blocked  = "blocked"
)

// Metrics are kube-apiserver's token cache metric families
// (k8s.io/apiserver pkg/authentication/token/cache/stats.go, v0.37.2):
// ALPHA, no help text of their own (so the help is component-base's bare
// "[ALPHA] "), one label "status", and the histogram on the default
// buckets. A nil *Metrics counts nothing.
type Metrics struct {
	requestDuration *prometheus.HistogramVec
	requests        *prometheus.CounterVec
	fetches         *prometheus.CounterVec
	activeFetches   *prometheus.GaugeVec
}

// NewMetrics creates the families and registers them on reg (nil: not
// registered). Like upstream's, they have no series until used.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	const ns, sub, help = "authentication", "token_cache", "[ALPHA] "
	labels := []string{"status"}
	m := &Metrics{
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Subsystem: sub, Name: "request_duration_seconds", Help: help,
			Buckets: prometheus.DefBuckets,
		}, labels),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "request_total", Help: help,
		}, labels),
		fetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "fetch_total", Help: help,
		}, labels),
		activeFetches: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "active_fetch_count", Help: help,
		}, labels),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.requestDuration, m.requests, m.fetches, m.activeFetches} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("register token cache metrics: %w", err)
			}
		}
	}
	return m, nil
}

// request counts one authentication through the cache, hit or miss, and
// its latency, which upstream truncates to whole milliseconds.
func (m *Metrics) request(hitOrMiss string, seconds float64) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(hitOrMiss).Inc()
	m.requestDuration.WithLabelValues(hitOrMiss).Observe(seconds)
}

// add moves the active_fetch_count gauge of status by d.
func (m *Metrics) add(status string, d float64) {
	if m != nil {
		m.activeFetches.WithLabelValues(status).Add(d)
	}
}

// fetched counts one call of the wrapped authenticator (or a shared call
// that found the result cached): "ok" unless it returned an error.
func (m *Metrics) fetched(err error) {
	if m == nil {
		return
	}
	status := fetchOK
	if err != nil {
		status = fetchError
	}
	m.fetches.WithLabelValues(status).Inc()
}
