package allocator

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
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
	ipAllocations *prometheus.CounterVec
	ipErrors      *prometheus.CounterVec
	ipLatency     *prometheus.HistogramVec

	portAllocations *prometheus.CounterVec
	portErrors      *prometheus.CounterVec

	portRepairErrors    *prometheus.CounterVec
	portRepairReconcile prometheus.Counter

	usage *usageCollector // the four gauges
}

// NewMetrics makes the allocators' metrics and registers them on reg (nil:
// not registered).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	const ip, port = "kube_apiserver_clusterip_allocator_", "kube_apiserver_nodeport_allocator_"
	m := &Metrics{
		usage: &usageCollector{
			ipAllocated:   prometheus.NewDesc(ip+"allocated_ips", "[ALPHA] Gauge measuring the number of allocated IPs for Services", []string{"cidr"}, nil),
			ipAvailable:   prometheus.NewDesc(ip+"available_ips", "[ALPHA] Gauge measuring the number of available IPs for Services", []string{"cidr"}, nil),
			portAllocated: prometheus.NewDesc(port+"allocated_ports", "[ALPHA] Gauge measuring the number of allocated NodePorts for Services", nil, nil),
			portAvailable: prometheus.NewDesc(port+"available_ports", "[ALPHA] Gauge measuring the number of available NodePorts for Services", nil, nil),
			ipRanges:      map[netip.Prefix]ipUsage{},
		},
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
		for _, c := range []prometheus.Collector{m.usage, m.ipAllocations, m.ipErrors, m.ipLatency,
			m.portAllocations, m.portErrors, m.portRepairErrors, m.portRepairReconcile} {
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

// ipRangeUsed makes p's gauges appear (upstream sets them with each
// allocation and release in the range).
func (m *Metrics) ipRangeUsed(a *IPs, p netip.Prefix) {
	if m == nil {
		return
	}
	u := m.usage
	u.mu.Lock()
	defer u.mu.Unlock()
	u.ips = a
	if _, ok := u.ipRanges[p]; !ok {
		u.ipRanges[p] = ipUsage{}
	}
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

// portsUsed makes the NodePort gauges count (upstream sets them, 0
// before, with each allocation and release).
func (m *Metrics) portsUsed(a *Ports) {
	if m == nil {
		return
	}
	u := m.usage
	u.mu.Lock()
	defer u.mu.Unlock()
	u.ports = a
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

// usageCollector serves the allocators' gauges. Upstream sets them after
// each allocation and release from what its informer holds then; kapi
// counts when /metrics is read (one list of the IPAddresses and one of
// the NodePort allocations per scrape, not per Service write): the
// current values, for the ranges that have had an allocation or release
// in this server, and the NodePort gauges at 0 until the first one.
type usageCollector struct {
	ipAllocated, ipAvailable, portAllocated, portAvailable *prometheus.Desc

	mu       sync.Mutex
	ips      *IPs
	ipRanges map[netip.Prefix]ipUsage // the last values, kept when a count fails
	ports    *Ports
	portUsed int
}

type ipUsage struct{ used int }

// scrapeTimeout bounds a scrape's counts.
const scrapeTimeout = 10 * time.Second

func (u *usageCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- u.ipAllocated
	ch <- u.ipAvailable
	ch <- u.portAllocated
	ch <- u.portAvailable
}

func (u *usageCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	u.mu.Lock()
	ips, ports := u.ips, u.ports
	ranges := make([]netip.Prefix, 0, len(u.ipRanges))
	for p := range u.ipRanges {
		ranges = append(ranges, p)
	}
	u.mu.Unlock()

	var counts map[netip.Prefix]int
	if ips != nil && len(ranges) > 0 {
		counts, _ = ips.usage(ctx, ranges)
	}
	portsUsed, portsErr := 0, error(nil)
	if ports != nil {
		portsUsed, portsErr = ports.used(ctx)
	}

	u.mu.Lock()
	defer u.mu.Unlock()
	for _, p := range ranges {
		if n, ok := counts[p]; ok {
			u.ipRanges[p] = ipUsage{used: n}
		}
		used := u.ipRanges[p].used
		free := max(int64(rangeSize(p))-int64(used), 0)
		ch <- prometheus.MustNewConstMetric(u.ipAllocated, prometheus.GaugeValue, float64(used), cidrLabel(p))
		ch <- prometheus.MustNewConstMetric(u.ipAvailable, prometheus.GaugeValue, float64(free), cidrLabel(p))
	}
	allocated, available := 0.0, 0.0
	if ports != nil {
		if portsErr == nil {
			u.portUsed = portsUsed
		}
		allocated, available = float64(u.portUsed), float64(ports.pr.Size-u.portUsed)
	}
	ch <- prometheus.MustNewConstMetric(u.portAllocated, prometheus.GaugeValue, allocated)
	ch <- prometheus.MustNewConstMetric(u.portAvailable, prometheus.GaugeValue, available)
}
