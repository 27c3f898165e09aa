package metrics

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Cache is the watch-cache metrics of one resource. A nil *Cache records
// nothing; methods are safe for concurrent use. Its children are resolved
// on first use, then kept.
type Cache struct {
	r *Resource

	eventsReceived, eventsDispatched, initializations   func() prometheus.Counter
	initEvents, terminated, capacityUp, capacityDown    func() prometheus.Counter
	listTotal, listFetched, listEvaluated, listReturned func() prometheus.Counter
	resourceVersion, capacity                           func() prometheus.Gauge
	readWait, initDuration                              func() prometheus.Observer
	// The hidden apiserver_cache_list_* families' (nil unless shown).
	hiddenList, hiddenFetched, hiddenReturned func() prometheus.Counter
}

// Cache returns the watch-cache metrics of the resource (nil if r is nil
// or records requests only).
func (r *Resource) Cache() *Cache {
	if r == nil || r.requestsOnly {
		return nil
	}
	g, res := r.gr.Group, r.gr.Resource
	counter := func(vec *prometheus.CounterVec, extra ...string) func() prometheus.Counter {
		return sync.OnceValue(func() prometheus.Counter { return vec.WithLabelValues(append([]string{g, res}, extra...)...) })
	}
	gauge := func(vec *prometheus.GaugeVec) func() prometheus.Gauge {
		return sync.OnceValue(func() prometheus.Gauge { return vec.WithLabelValues(g, res) })
	}
	m := r.m
	// The cache's lists are counted in the storage list families with
	// storage "watchcache", as upstream's RecordListCacheMetrics counts
	// them (its apiserver_cache_list_* families are deprecated in 1.37.0
	// and hidden; served with Options.ShowHidden). The index label is "":
	// the cache serves lists by key prefix, with no index (upstream's value
	// when no index is used).
	c := &Cache{
		r:                r,
		eventsReceived:   counter(m.cacheEventsReceived),
		eventsDispatched: counter(m.cacheEventsDispatched),
		initializations:  counter(m.cacheInitializations),
		initEvents:       counter(m.cacheInitEvents),
		terminated:       counter(m.cacheTerminated),
		capacityUp:       counter(m.cacheCapacityUp),
		capacityDown:     counter(m.cacheCapacityDown),
		listTotal:        counter(m.listTotal, StorageWatchCache, ""),
		listFetched:      counter(m.listFetched, StorageWatchCache, ""),
		listEvaluated:    counter(m.listEvaluated, StorageWatchCache),
		listReturned:     counter(m.listReturned, StorageWatchCache),
		resourceVersion:  gauge(m.cacheResourceVersion),
		capacity:         gauge(m.cacheCapacity),
		readWait: sync.OnceValue(func() prometheus.Observer {
			return m.cacheReadWait.WithLabelValues(g, res)
		}),
		initDuration: sync.OnceValue(func() prometheus.Observer {
			return m.cacheInitDuration.WithLabelValues(g, res)
		}),
	}
	if m.hiddenCacheList != nil {
		c.hiddenList = counter(m.hiddenCacheList, "")
		c.hiddenFetched = counter(m.hiddenCacheFetched, "")
		c.hiddenReturned = counter(m.hiddenCacheReturns)
	}
	return c
}

// EventReceived counts one event from the underlying store.
func (c *Cache) EventReceived() {
	if c != nil {
		c.eventsReceived().Inc()
	}
}

// EventDispatched counts one event applied and dispatched to watchers.
func (c *Cache) EventDispatched() {
	if c != nil {
		c.eventsDispatched().Inc()
	}
}

// Initialized counts one (re)initialization of the cache from a list at
// revision rv, which took d from the start of its list and watch.
func (c *Cache) Initialized(rv uint64, d time.Duration) {
	if c == nil {
		return
	}
	c.initializations().Inc()
	c.initDuration().Observe(d.Seconds())
	c.ResourceVersion(rv)
}

// ResourceVersion sets the revision the cache is at, truncated to its 15
// least significant digits as upstream (a float64 holds them exactly).
func (c *Cache) ResourceVersion(rv uint64) {
	if c != nil {
		c.resourceVersion().Set(float64(rv % 1_000_000_000_000_000))
	}
}

// Capacity records the event window's capacity, changed from old (0: the
// initial capacity, not counted as a change).
func (c *Cache) Capacity(old, capacity int) {
	if c == nil {
		return
	}
	c.capacity().Set(float64(capacity))
	switch {
	case old == 0 || old == capacity:
	case old < capacity:
		c.capacityUp().Inc()
	default:
		c.capacityDown().Inc()
	}
}

// InitEvent counts one initial event sent to a watcher.
func (c *Cache) InitEvent() {
	if c != nil {
		c.initEvents().Inc()
	}
}

// WatcherTerminated counts one watcher closed for not keeping up.
func (c *Cache) WatcherTerminated() {
	if c != nil {
		c.terminated().Inc()
	}
}

// ReadWait observes how long a read waited for the cache to be fresh.
func (c *Cache) ReadWait(d time.Duration) {
	if c != nil {
		c.readWait().Observe(d.Seconds())
	}
}

// ConsistentRead counts one consistent read (a list without a
// resourceVersion): whether it succeeded, and whether it fell back to the
// underlying store.
func (c *Cache) ConsistentRead(success, fallback bool) {
	if c != nil {
		c.r.m.cacheConsistentReads.WithLabelValues(c.r.gr.Group, c.r.gr.Resource,
			strconv.FormatBool(success), strconv.FormatBool(fallback)).Inc()
	}
}

// List records one LIST served from the cache: the objects scanned and
// the ones returned.
func (c *Cache) List(fetched, returned int) {
	if c == nil {
		return
	}
	c.listTotal().Inc()
	c.listFetched().Add(float64(fetched))
	// Upstream records no evaluated objects for the cache's lists: 0.
	c.listEvaluated().Add(0)
	c.listReturned().Add(float64(returned))
	if c.hiddenList != nil {
		c.hiddenList().Inc()
		c.hiddenFetched().Add(float64(fetched))
		c.hiddenReturned().Add(float64(returned))
	}
}
