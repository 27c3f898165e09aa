package cacher

import (
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// Dispatch latency (apiserver_watch_events_dispatch_duration_seconds).
//
// Upstream (k8s.io/apiserver v0.37.2, pkg/storage/cacher) observes three
// stages for each event it delivers to a watcher, from the watcher's
// goroutine: storage_to_cache, from the etcd watch's receipt of the event
// (its parseEvent, before the object is decoded) to the watch cache's
// processEvent; cache_to_watcher, from the watcher's watch.Event being
// built (after its filter) to the event written to the watcher's result
// channel; total, from the etcd receipt to that write. Bookmarks, initial
// events (and the events a watch from an older revision replays from the
// cache) and events a watcher does not get are not observed, so an event
// no watcher gets is observed nowhere.
//
// kapi's points, mapped onto its own pipeline:
//
//   - recorded: when the etcd3 store's watch received the etcd response
//     carrying the event, before decoding it (etcd3's watcher, read by the
//     reflector through [receiptTimer]; upstream's time). A store that does
//     not say (the memory store; a watch read on its result channel) gets
//     the cache's receipt time, as upstream's watch cache does for events
//     that carry none: storage_to_cache is then 0.
//   - received: when the reflector got the event from the store's watch
//     (upstream: the start of processEvent). Approximate: kapi applies the
//     events of one revision together, so an event may wait after this
//     point for the rest of its revision; that wait is in total only, as
//     upstream's queueing between processEvent and its watchers is.
//   - built: when the watcher has turned the cache's event into its own
//     (deliver, after its selectors), just before handing it over.
//   - sent: when the hand-over returned. For a watcher read on its result
//     channel that is the channel write, as upstream's. For a streamed
//     watcher (kapi's watch handler reads the cache's watchers so, with no
//     result channel between) the hand-over is the handler's send, which
//     encodes the event and writes it to the response: cache_to_watcher
//     then also counts that encoding and write, which upstream's watch
//     server does after its channel read, outside the histogram.
//
// Events a lagging watcher catches up on from the event window are live
// events it gets late, and are observed (upstream has no such watchers:
// it closes them).
//
// Each watcher counts in counters of its own (storagemetrics'
// DispatchCounter), which a scrape adds up: the cost per delivery is one
// clock read (two after a wait) and six uncontended atomic adds, with no
// allocation.

// monoBase is the origin of the cache's monotonic timestamps.
var monoBase = time.Now()

// monoNow is the monotonic clock in nanoseconds since monoBase: one clock
// read, where time.Now reads the wall clock too.
func monoNow() int64 { return int64(time.Since(monoBase)) }

// eventTimes are the monotonic times (monoNow) at which the underlying
// store and the cache received an event; zero when the cache records no
// dispatch latency.
type eventTimes struct {
	recorded, received int64
}

// receiptTimer may be implemented by the underlying store's watch (the
// etcd3 store's does): ReceivedAt is when the store received the event
// being delivered by its Stream, valid while the Stream's callback runs.
type receiptTimer interface {
	ReceivedAt() time.Time
}

// receiptTimes are the times of an event the reflector receives now from
// a watch whose receipt times rt tells (nil: none).
func (c *Cacher) receiptTimes(rt receiptTimer) eventTimes {
	if c.dispatchLatency == nil {
		return eventTimes{}
	}
	now := monoNow()
	t := eventTimes{recorded: now, received: now}
	if rt != nil {
		if at := rt.ReceivedAt(); !at.IsZero() {
			t.recorded = int64(at.Sub(monoBase))
		}
	}
	return t
}

// sendEvent hands the watcher's event out, built from the cache's event
// ev, with send; a live event delivered is counted in the watcher's
// counters of the dispatch latency histogram.
func (w *cacheWatcher) sendEvent(ev *event, out watch.Event, send func(watch.Event) bool) bool {
	if w.dispatched == nil || ev.times.received == 0 {
		return send(out)
	}
	// A watcher that has not waited since its last delivery built this
	// event right after it: that delivery's end is its start, one clock
	// read less per event for the busy watchers (the read is much of
	// what the histogram costs). It is early by the time taken to pick
	// and build the event, well under the first bucket.
	built := w.lastSent
	if built == 0 {
		built = monoNow()
	}
	if !send(out) {
		return false
	}
	sent := monoNow()
	w.lastSent = sent
	w.dispatched.Delivered(time.Duration(ev.times.received-ev.times.recorded), time.Duration(sent-built), time.Duration(sent-ev.times.recorded))
	return true
}
