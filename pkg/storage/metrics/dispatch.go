package metrics

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// apiserver_watch_events_dispatch_duration_seconds{group,resource,stage},
// as k8s.io/apiserver v0.37.2 pkg/storage/cacher/metrics (its
// DispatchStageDuration, registered unconditionally: no feature gate).
// Upstream's cacher makes the three series of its resource when it is
// created, so every cached resource has them, with count 0, from the
// start; they are observed once per event delivered to a watcher (not for
// bookmarks, initial events, or events no watcher gets).
//
// It is observed on the watch fan-out's hot path, once per event and
// watcher, from every watcher's goroutine: a client_golang histogram
// would cost four atomic operations per stage on counters all watchers
// share, and so would adding batches to shared counters whenever a
// watcher waits (contended, an atomic add costs as much as the rest of a
// delivery). So each watcher has counters of its own (DispatchCounter:
// atomic, but written by its goroutine only), which a scrape adds up with
// those of the watchers that have ended. The exposition is the same as a
// histogram vector's.

// dispatchBuckets are the family's buckets (100 µs to 5 s), as seconds
// and as nanoseconds.
var (
	dispatchBuckets      = [...]float64{0.0001, 0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}
	dispatchBucketsNanos = func() (ns [len(dispatchBuckets)]int64) {
		for i, b := range dispatchBuckets {
			ns[i] = int64(b*1e9 + 0.5)
		}
		return ns
	}()
)

// The dispatch stages, in the order of their label values.
const (
	// stageCacheToWatcher: from the watcher's event being built to its
	// hand-over to the watcher's reader.
	stageCacheToWatcher = iota
	// stageStorageToCache: from the storage's receipt of the event to
	// the cache's.
	stageStorageToCache
	// stageTotal: from the storage's receipt of the event to its
	// hand-over to the watcher's reader.
	stageTotal
	numStages
)

var stageNames = [numStages]string{"cache_to_watcher", "storage_to_cache", "total"}

// dispatchFamily is the family: a collector of the series of every
// resource whose Dispatch was made.
type dispatchFamily struct {
	desc   *prometheus.Desc
	mu     sync.Mutex
	series []*Dispatch
}

func newDispatchFamily() *dispatchFamily {
	return &dispatchFamily{desc: prometheus.NewDesc("apiserver_watch_events_dispatch_duration_seconds",
		"[ALPHA] Histogram of watch event dispatch latency broken by resource type and pipeline stage. The 'total' stage is the end-to-end latency of a delivered event.",
		[]string{"group", "resource", "stage"}, nil)}
}

// Describe implements prometheus.Collector.
func (f *dispatchFamily) Describe(ch chan<- *prometheus.Desc) { ch <- f.desc }

// Collect implements prometheus.Collector.
func (f *dispatchFamily) Collect(ch chan<- prometheus.Metric) {
	f.mu.Lock()
	series := f.series
	f.mu.Unlock()
	for _, d := range series {
		totals := d.totals()
		for s := range numStages {
			t := &totals[s]
			buckets := make(map[float64]uint64, len(dispatchBuckets))
			var n uint64
			for i, b := range dispatchBuckets {
				n += t.buckets[i]
				buckets[b] = n
			}
			n += t.buckets[len(dispatchBuckets)]
			ch <- prometheus.MustNewConstHistogram(f.desc, n, float64(t.sum)/1e9, buckets, d.group, d.resource, stageNames[s])
		}
	}
}

// stageTotals are one series' observations per bucket (not cumulative;
// the last is +Inf's) and their sum in nanoseconds.
type stageTotals struct {
	buckets [len(dispatchBuckets) + 1]uint64
	sum     int64
}

// Dispatch is the watch event dispatch latency of one resource's watch
// cache: its watchers' counters and those of its ended watchers. A nil
// *Dispatch records nothing; methods are safe for concurrent use.
type Dispatch struct {
	group, resource string
	mu              sync.Mutex
	ended           [numStages]stageTotals
	live            map[*DispatchCounter]struct{}
}

// Dispatch returns the dispatch latency histogram of the cache's resource
// and makes its three series now, as upstream's cacher does when it is
// created (nil if c is nil: nothing recorded, no series). A second call
// for the same resource (a cache made again) returns the same series.
func (c *Cache) Dispatch() *Dispatch {
	if c == nil {
		return nil
	}
	f := c.r.m.dispatch
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, d := range f.series {
		if d.group == c.r.gr.Group && d.resource == c.r.gr.Resource {
			return d
		}
	}
	d := &Dispatch{group: c.r.gr.Group, resource: c.r.gr.Resource, live: map[*DispatchCounter]struct{}{}}
	// Copied on write: Collect reads the slice without the lock.
	f.series = append(f.series[:len(f.series):len(f.series)], d)
	return d
}

// totals adds up the counters of the live and ended watchers.
func (d *Dispatch) totals() [numStages]stageTotals {
	d.mu.Lock()
	defer d.mu.Unlock()
	t := d.ended
	for c := range d.live {
		c.addTo(&t)
	}
	return t
}

// DispatchCounter counts the deliveries of one watcher. Delivered is
// called by the watcher's goroutine only (its atomic adds are not
// contended); a scrape reads the counters meanwhile.
type DispatchCounter struct {
	d      *Dispatch
	stages [numStages]struct {
		buckets [len(dispatchBuckets) + 1]atomic.Uint64
		sum     atomic.Int64
	}
}

// NewCounter returns the counters of a new watcher, counted in d until
// Close (nil if d is nil).
func (d *Dispatch) NewCounter() *DispatchCounter {
	if d == nil {
		return nil
	}
	c := &DispatchCounter{d: d}
	d.mu.Lock()
	d.live[c] = struct{}{}
	d.mu.Unlock()
	return c
}

// Delivered counts one event delivered to the watcher: the time from the
// storage's receipt of the event to the cache's (storageToCache), from the
// watcher's event being built to its hand-over (cacheToWatcher), and from
// the storage's receipt to the hand-over (total). Negative durations count
// as 0, as upstream's.
func (c *DispatchCounter) Delivered(storageToCache, cacheToWatcher, total time.Duration) {
	c.add(stageStorageToCache, storageToCache)
	c.add(stageCacheToWatcher, cacheToWatcher)
	c.add(stageTotal, total)
}

func (c *DispatchCounter) add(stage int, d time.Duration) {
	ns := max(int64(d), 0)
	i := 0
	for i < len(dispatchBucketsNanos) && ns > dispatchBucketsNanos[i] {
		i++
	}
	s := &c.stages[stage]
	s.buckets[i].Add(1)
	s.sum.Add(ns)
}

// addTo adds the counters to t.
func (c *DispatchCounter) addTo(t *[numStages]stageTotals) {
	for s := range numStages {
		for i := range c.stages[s].buckets {
			t[s].buckets[i] += c.stages[s].buckets[i].Load()
		}
		t[s].sum += c.stages[s].sum.Load()
	}
}

// Close ends the watcher's counting: its counts stay in the series. Safe
// to call more than once, and on nil.
func (c *DispatchCounter) Close() {
	if c == nil {
		return
	}
	d := c.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.live[c]; ok {
		delete(d.live, c)
		c.addTo(&d.ended)
	}
}
