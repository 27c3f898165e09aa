package healthz

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics records the result of every check the aggregate handlers run
// (health.md 35):
//
//	kubernetes_healthcheck{name,type}               gauge: 1 success, 0 error
//	kubernetes_healthchecks_total{name,status,type} counter: status success|error
//
// type is the endpoint (healthz, livez or readyz). Excluded checks are not
// recorded, nor are single-check requests (/<ep>/<name>), as upstream.
// A nil *Metrics records nothing.
type Metrics struct {
	gauge   *prometheus.GaugeVec
	counter *prometheus.CounterVec
}

// NewMetrics creates the health-check metrics and registers them on reg.
// If reg already holds them (the servers of one chain share a registry), the
// registered collectors are reused. reg nil leaves them unregistered.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	gauge := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "kubernetes",
		Name:      "healthcheck",
		Help:      "[STABLE] This metric records the result of a single healthcheck.",
	}, []string{"name", "type"})
	counter := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "kubernetes",
		Name:      "healthchecks_total",
		Help:      "[STABLE] This metric records the results of all healthcheck.",
	}, []string{"name", "type", "status"})
	m := &Metrics{gauge: gauge, counter: counter}
	if reg == nil {
		return m, nil
	}
	var err error
	if m.gauge, err = register(reg, gauge); err != nil {
		return nil, fmt.Errorf("register kubernetes_healthcheck: %w", err)
	}
	if m.counter, err = register(reg, counter); err != nil {
		return nil, fmt.Errorf("register kubernetes_healthchecks_total: %w", err)
	}
	return m, nil
}

// register registers c on reg, or returns the equal collector reg already
// holds.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

// observe records one evaluated check of endpoint ep.
func (m *Metrics) observe(name, ep string, err error) {
	if m == nil {
		return
	}
	if err != nil {
		m.gauge.WithLabelValues(name, ep).Set(0)
		m.counter.WithLabelValues(name, ep, "error").Inc()
		return
	}
	m.gauge.WithLabelValues(name, ep).Set(1)
	m.counter.WithLabelValues(name, ep, "success").Inc()
}
