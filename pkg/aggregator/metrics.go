package aggregator

import (
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kapi-dev/kapi/pkg/aggregator/apiservice"
)

// unavailableDesc is aggregator_unavailable_apiservice (kube-aggregator
// v0.37 pkg/controllers/status/metrics, ALPHA): 1 for an APIService the
// availability controllers last found not Available, 0 otherwise.
var unavailableDesc = prometheus.NewDesc("aggregator_unavailable_apiservice",
	"[ALPHA] Gauge of APIServices which are marked as unavailable broken down by APIService name.",
	[]string{"name"}, nil)

// availabilityMetrics are the availability controllers' metrics, as
// kube-aggregator's: the gauge above, set on every sync of an APIService
// and dropped when it is deleted, and aggregator_unavailable_apiservice_total,
// counted when an update of the status turns an Available APIService
// unavailable. A nil *availabilityMetrics records nothing.
type availabilityMetrics struct {
	unavailableTotal *prometheus.CounterVec

	mu          sync.RWMutex
	unavailable map[string]bool // APIService name -> unavailable
}

func newAvailabilityMetrics(reg prometheus.Registerer) (*availabilityMetrics, error) {
	m := &availabilityMetrics{
		unavailableTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "aggregator_unavailable_apiservice_total",
			Help: "[ALPHA] Counter of APIServices which are marked as unavailable broken down by APIService name and reason.",
		}, []string{"name", "reason"}),
		unavailable: map[string]bool{},
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.unavailableTotal, (*unavailableGauge)(m)} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register aggregator availability metrics: %w", err)
		}
	}
	return m, nil
}

// synced sets the gauge of svc from its Available condition (upstream's
// SetUnavailableGauge, called on every sync whether or not the status is
// written).
func (m *availabilityMetrics) synced(name string, available bool) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.unavailable[name] = !available
	m.mu.Unlock()
}

// forget drops the gauge of a deleted APIService (upstream forgets one
// when its sync finds it deleted).
func (m *availabilityMetrics) forget(name string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	delete(m.unavailable, name)
	m.mu.Unlock()
}

// statusWritten counts a written status that made an Available APIService
// unavailable, by the new condition's reason (upstream's
// SetUnavailableCounter).
func (m *availabilityMetrics) statusWritten(name string, before, after *apiregistrationv1.APIService) {
	if m == nil || !apiservice.IsAvailable(before) || apiservice.IsAvailable(after) {
		return
	}
	reason := "UnknownReason"
	if c := apiservice.Condition(after, apiregistrationv1.Available); c != nil {
		reason = c.Reason
	}
	m.unavailableTotal.WithLabelValues(name, reason).Inc()
}

// unavailableGauge collects aggregator_unavailable_apiservice.
type unavailableGauge availabilityMetrics

func (g *unavailableGauge) Describe(ch chan<- *prometheus.Desc) { ch <- unavailableDesc }

func (g *unavailableGauge) Collect(ch chan<- prometheus.Metric) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	for name, unavailable := range g.unavailable {
		v := 0.0
		if unavailable {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(unavailableDesc, prometheus.GaugeValue, v, name)
	}
}
