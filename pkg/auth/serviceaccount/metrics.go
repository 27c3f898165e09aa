package serviceaccount

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the service-account token usage counters kube-apiserver
// v1.37 serves (k8s.io/kubernetes pkg/serviceaccount/metrics.go, v1.37.2:
// names, help and stability levels), present from the start with value 0.
// A nil *Metrics counts nothing.
type Metrics struct {
	legacy, stale, valid                  prometheus.Counter
	manualUses, autoUses, invalidAutoUses prometheus.Counter
}

// NewMetrics creates the counters and registers them on reg (nil: not
// registered).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	counter := func(name, stability, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "serviceaccount", Name: name, Help: "[" + stability + "] " + help,
		})
	}
	m := &Metrics{
		legacy:          counter("legacy_tokens_total", "BETA", "Cumulative legacy service account tokens used"),
		stale:           counter("stale_tokens_total", "BETA", "Cumulative stale projected service account tokens used"),
		manualUses:      counter("legacy_manual_token_uses_total", "ALPHA", "Cumulative manually created legacy tokens used"),
		autoUses:        counter("legacy_auto_token_uses_total", "ALPHA", "Cumulative auto-generated legacy tokens used"),
		invalidAutoUses: counter("invalid_legacy_auto_token_uses_total", "ALPHA", "Cumulative invalid auto-generated legacy tokens used"),
		valid:           counter("valid_tokens_total", "BETA", "Cumulative valid projected service account tokens used"),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.legacy, m.stale, m.manualUses, m.autoUses, m.invalidAutoUses, m.valid} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("register service account metrics: %w", err)
			}
		}
	}
	return m, nil
}

func (m *Metrics) inc(pick func(*Metrics) prometheus.Counter) {
	if m != nil {
		pick(m).Inc()
	}
}
