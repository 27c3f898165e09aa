package allocator

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The scope label of the allocation counters: a requested value or one
// the allocator picked.
const (
	scopeStatic  = "static"
	scopeDynamic = "dynamic"
)

// Metrics are the allocators' metrics, named, labelled and described as
// kube-apiserver v1.37's (pkg/registry/core/service/ipallocator/metrics.go
// and portallocator/metrics.go, all ALPHA):
// kube_apiserver_clusterip_allocator_{allocated_ips,available_ips}{cidr},
// _{allocation_total,allocation_errors_total}{cidr,scope} and
// _allocation_duration_seconds{cidr}; and
// kube_apiserver_nodeport_allocator_{allocated_ports,available_ports}
// (unlabelled, 0 until the first allocation or release) and
// _{allocation_total,allocation_errors_total}{scope}; and the NodePort
// repair's apiserver_nodeport_repair_port_errors_total{type} and
// apiserver_nodeport_repair_reconcile_errors_total (0 from the start).
// A ClusterIP series
// appears with the first allocation (or release) in its range. A nil
// *Metrics records nothing.
type Metrics struct {
	ipAllocated   *prometheus.GaugeVec
	ipAvailable   *prometheus.GaugeVec
	ipAllocations *prometheus.CounterVec
	ipErrors      *prometheus.CounterVec
	ipLatency     *prometheus.HistogramVec

	portAllocated   prometheus.Gauge
	portAvailable   prometheus.Gauge
	portAllocations *prometheus.CounterVec
	portErrors      *prometheus.CounterVec

	portRepairErrors    *prometheus.CounterVec
	portRepairReconcile prometheus.Counter
}

// NewMetrics makes the allocators' metrics and registers them on reg (nil:
// not registered).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	const ip, port = "kube_apiserver_clusterip_allocator_", "kube_apiserver_nodeport_allocator_"
	m := &Metrics{
		ipAllocated: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: ip + "allocated_ips",
			Help: "[ALPHA] Gauge measuring the number of allocated IPs for Services",
		}, []string{"cidr"}),
		ipAvailable: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: ip + "available_ips",
			Help: "[ALPHA] Gauge measuring the number of available IPs for Services",
		}, []string{"cidr"}),
		ipAllocations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: ip + "allocation_total",
			Help: "[ALPHA] Number of Cluster IPs allocations",
		}, []string{"cidr", "scope"}),
		ipErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: ip + "allocation_errors_total",
			Help: "[ALPHA] Number of errors trying to allocate Cluster IPs",
		}, []string{"cidr", "scope"}),
		ipLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: ip + "allocation_duration_seconds",
			Help: "[ALPHA] Duration in seconds to allocate a Cluster IP by ServiceCIDR",
			// component-base's DefBuckets, prometheus's.
			Buckets: prometheus.DefBuckets,
		}, []string{"cidr"}),
		portAllocated: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: port + "allocated_ports",
			Help: "[ALPHA] Gauge measuring the number of allocated NodePorts for Services",
		}),
		portAvailable: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: port + "available_ports",
			Help: "[ALPHA] Gauge measuring the number of available NodePorts for Services",
		}),
		portAllocations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: port + "allocation_total",
			Help: "[ALPHA] Number of NodePort allocations",
		}, []string{"scope"}),
		portErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: port + "allocation_errors_total",
			Help: "[ALPHA] Number of errors trying to allocate NodePort",
		}, []string{"scope"}),
		// pkg/registry/core/service/portallocator/controller/metrics.go.
		portRepairErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_nodeport_repair_port_errors_total",
			Help: "[ALPHA] Number of errors detected on ports by the repair loop broken down by type of error: leak, repair, full, outOfRange, duplicate, unknown",
		}, []string{"type"}),
		portRepairReconcile: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "apiserver_nodeport_repair_reconcile_errors_total",
			Help: "[ALPHA] Number of reconciliation failures on the nodeport repair reconcile loop",
		}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.ipAllocated, m.ipAvailable, m.ipAllocations, m.ipErrors, m.ipLatency,
			m.portAllocated, m.portAvailable, m.portAllocations, m.portErrors, m.portRepairErrors, m.portRepairReconcile} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("register allocator metrics: %w", err)
			}
		}
	}
	return m, nil
}

// cidrLabel is the cidr label of a range: upstream's net.IPNet String of
// the ServiceCIDR's range, which netip.Prefix's String matches for the
// masked prefixes the allocator keeps.
func cidrLabel(p netip.Prefix) string { return p.String() }

func (m *Metrics) ipAllocation(p netip.Prefix, scope string) {
	if m != nil {
		m.ipAllocations.WithLabelValues(cidrLabel(p), scope).Inc()
	}
}

func (m *Metrics) ipError(p netip.Prefix, scope string) {
	if m != nil {
		m.ipErrors.WithLabelValues(cidrLabel(p), scope).Inc()
	}
}

func (m *Metrics) ipDuration(p netip.Prefix, d time.Duration) {
	if m != nil {
		m.ipLatency.WithLabelValues(cidrLabel(p)).Observe(d.Seconds())
	}
}

// ipUsage sets the gauges of p: used addresses, and the rest of its
// allocatable ones (upstream's Allocator.Used and Free).
func (m *Metrics) ipUsage(p netip.Prefix, used int) {
	if m == nil {
		return
	}
	free := int64(rangeSize(p)) - int64(used)
	m.ipAllocated.WithLabelValues(cidrLabel(p)).Set(float64(used))
	m.ipAvailable.WithLabelValues(cidrLabel(p)).Set(float64(max(free, 0)))
}

func (m *Metrics) portAllocation(scope string) {
	if m != nil {
		m.portAllocations.WithLabelValues(scope).Inc()
	}
}

func (m *Metrics) portError(scope string) {
	if m != nil {
		m.portErrors.WithLabelValues(scope).Inc()
	}
}

func (m *Metrics) portUsage(used, size int) {
	if m == nil {
		return
	}
	m.portAllocated.Set(float64(used))
	m.portAvailable.Set(float64(size - used))
}

func (m *Metrics) portRepairError(kind string) {
	if m != nil {
		m.portRepairErrors.WithLabelValues(kind).Inc()
	}
}

func (m *Metrics) portRepairFailed() {
	if m != nil {
		m.portRepairReconcile.Inc()
	}
}
