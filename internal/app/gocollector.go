package app

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// lazyGoCollector is client_golang's Go collector with every runtime
// metric (collectors.MetricsAll), made on the first scrape instead of when
// the server is configured. Making it matches the rules against every
// runtime/metrics name, reads the histograms' buckets and builds ~100
// descriptors: ~0.6 ms of a start's CPU on the path to ready
// (docs/performance-history.md, "Session 18: start → ready on memory"), for
// metrics nobody reads before the first scrape of /metrics.
//
// It registers as an unchecked collector (Describe sends nothing), so the
// registry does not see its descriptors at Register; what a scrape gathers
// is the Go collector's own output, and a gather still checks each metric
// for consistency and duplicates.
type lazyGoCollector struct {
	c func() prometheus.Collector
}

func newLazyGoCollector() *lazyGoCollector {
	return &lazyGoCollector{c: sync.OnceValue(func() prometheus.Collector {
		return collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsAll))
	})}
}

// Describe sends nothing: see lazyGoCollector.
func (l *lazyGoCollector) Describe(chan<- *prometheus.Desc) {}

// Collect makes the Go collector on the first call and collects it.
func (l *lazyGoCollector) Collect(ch chan<- prometheus.Metric) { l.c().Collect(ch) }
