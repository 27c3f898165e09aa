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
// share. So a watcher counts its deliveries in a DispatchBatch of its own
// (plain memory) and adds them to the shared counters (Dispatch.Flush)
// before it waits for its next event, one atomic add per bucket touched;
// the family is collected from those counters. The exposition is the
// same as a histogram vector's.

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

// dispatchCounts are one series' counters: observations per bucket (not
// cumulative; the last is +Inf's) and their sum in nanoseconds.
type dispatchCounts struct {
	buckets [len(dispatchBuckets) + 1]atomic.Uint64
	sum     atomic.Int64
}

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
		for s := range numStages {
			c := &d.stages[s]
			buckets := make(map[float64]uint64, len(dispatchBuckets))
			var n uint64
			for i, b := range dispatchBuckets {
				n += c.buckets[i].Load()
				buckets[b] = n
			}
			n += c.buckets[len(dispatchBuckets)].Load()
			ch <- prometheus.MustNewConstHistogram(f.desc, n, float64(c.sum.Load())/1e9, buckets, d.group, d.resource, stageNames[s])
		}
	}
}

// Dispatch is the watch event dispatch latency of one resource's watch
// cache. A nil *Dispatch records nothing; Flush is safe for concurrent
// use.
type Dispatch struct {
	group, resource string
	stages          [numStages]dispatchCounts
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
	d := &Dispatch{group: c.r.gr.Group, resource: c.r.gr.Resource}
	// Copied on write: Collect reads the slice without the lock.
	f.series = append(f.series[:len(f.series):len(f.series)], d)
	return d
}

// DispatchBatch counts the deliveries of one watcher not yet added to its
// resource's series (Dispatch.Flush). Its methods are not safe for
// concurrent use: it is the watcher's own.
type DispatchBatch struct {
	buckets [numStages][len(dispatchBuckets) + 1]uint32
	sum     [numStages]int64
	n       int
}

// DispatchBatchMax is the number of deliveries after which a watcher
// should flush its batch even if it is not about to wait (so a watcher
// that never waits still shows its deliveries).
const DispatchBatchMax = 256

// Delivered counts one event delivered to the watcher: the time from the
// storage's receipt of the event to the cache's (storageToCache), from the
// watcher's event being built to its hand-over (cacheToWatcher), and from
// the storage's receipt to the hand-over (total). Negative durations count
// as 0, as upstream's. It returns the number of deliveries in the batch.
func (b *DispatchBatch) Delivered(storageToCache, cacheToWatcher, total time.Duration) int {
	b.add(stageStorageToCache, storageToCache)
	b.add(stageCacheToWatcher, cacheToWatcher)
	b.add(stageTotal, total)
	b.n++
	return b.n
}

func (b *DispatchBatch) add(stage int, d time.Duration) {
	ns := max(int64(d), 0)
	i := 0
	for i < len(dispatchBucketsNanos) && ns > dispatchBucketsNanos[i] {
		i++
	}
	b.buckets[stage][i]++
	b.sum[stage] += ns
}

// Pending is the number of deliveries in the batch.
func (b *DispatchBatch) Pending() int { return b.n }

// Flush adds the batch to d's series and empties it.
func (d *Dispatch) Flush(b *DispatchBatch) {
	if b.n == 0 {
		return
	}
	if d != nil {
		for s := range numStages {
			c := &d.stages[s]
			for i, n := range b.buckets[s] {
				if n != 0 {
					c.buckets[i].Add(uint64(n))
				}
			}
			c.sum.Add(b.sum[s])
		}
	}
	*b = DispatchBatch{}
}
