package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CountFunc counts the objects of a resource.
type CountFunc func(ctx context.Context) (int64, error)

// countTimeout bounds one count at scrape time.
const countTimeout = time.Second

// objectCounts is the collector of apiserver_resource_objects (its
// deprecated predecessor apiserver_storage_objects, STABLE and deprecated
// in 1.34.0, is hidden from 1.37 on by component-base, and so served only
// with Options.ShowHidden, from the same counts, labelled by
// "resource.group"): each resource's count is read from its
// source when scraped, where upstream polls every minute
// (--etcd-count-metric-poll-period); the sources are local (the watch
// cache, the memory backend) except before a watch cache is ready.
//
// It also reports apiserver_resource_size_estimate_bytes of the resources
// given a size source (TrackSize), read at scrape time too.
type objectCounts struct {
	resourceObjects *prometheus.Desc
	sizeEstimate    *prometheus.Desc
	storageObjects  *prometheus.Desc // nil: hidden

	mu      sync.Mutex
	sources map[schema.GroupResource]*source
	sizes   map[schema.GroupResource]*source
}

type source struct{ count CountFunc }

func newObjectCounts(showHidden bool) *objectCounts {
	o := &objectCounts{
		resourceObjects: prometheus.NewDesc("apiserver_resource_objects",
			"[ALPHA] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
			[]string{"group", "resource"}, nil),
		sizeEstimate: prometheus.NewDesc("apiserver_resource_size_estimate_bytes",
			"[ALPHA] Estimated size of stored objects in database. Estimate is based on sum of last observed sizes of serialized objects. In case of a fetching error, the value will be -1.",
			[]string{"group", "resource"}, nil),
		sources: make(map[schema.GroupResource]*source),
		sizes:   make(map[schema.GroupResource]*source),
	}
	if showHidden {
		o.storageObjects = prometheus.NewDesc("apiserver_storage_objects",
			"[STABLE] (Deprecated since 1.34.0) [DEPRECATED, consider using apiserver_resource_objects instead] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
			[]string{"resource"}, nil)
	}
	return o
}

func (o *objectCounts) track(sources map[schema.GroupResource]*source, gr schema.GroupResource, count CountFunc) func() {
	s := &source{count: count}
	o.mu.Lock()
	sources[gr] = s
	o.mu.Unlock()
	return func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		if sources[gr] == s {
			delete(sources, gr)
		}
	}
}

// Describe implements prometheus.Collector.
func (o *objectCounts) Describe(ch chan<- *prometheus.Desc) {
	ch <- o.resourceObjects
	ch <- o.sizeEstimate
	if o.storageObjects != nil {
		ch <- o.storageObjects
	}
}

// Collect implements prometheus.Collector.
func (o *objectCounts) Collect(ch chan<- prometheus.Metric) {
	o.mu.Lock()
	sources := make(map[schema.GroupResource]*source, len(o.sources))
	for gr, s := range o.sources {
		sources[gr] = s
	}
	sizes := make(map[schema.GroupResource]*source, len(o.sizes))
	for gr, s := range o.sizes {
		sizes[gr] = s
	}
	o.mu.Unlock()
	collect := func(desc, legacy *prometheus.Desc, sources map[schema.GroupResource]*source) {
		for gr, s := range sources {
			ctx, cancel := context.WithTimeout(context.Background(), countTimeout)
			n, err := s.count(ctx)
			cancel()
			v := float64(n)
			if err != nil {
				v = -1
			}
			ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, gr.Group, gr.Resource)
			if legacy != nil {
				ch <- prometheus.MustNewConstMetric(legacy, prometheus.GaugeValue, v, gr.String())
			}
		}
	}
	collect(o.resourceObjects, o.storageObjects, sources)
	collect(o.sizeEstimate, nil, sizes)
}

// ObjectCount counts the objects of gr through its tracked source (false:
// no source, or the count failed). API Priority and Fairness estimates the
// width of lists with it.
func (m *Metrics) ObjectCount(ctx context.Context, gr schema.GroupResource) (int64, bool) {
	if m == nil {
		return 0, false
	}
	m.objects.mu.Lock()
	s := m.objects.sources[gr]
	m.objects.mu.Unlock()
	if s == nil {
		return 0, false
	}
	n, err := s.count(ctx)
	return n, err == nil
}
