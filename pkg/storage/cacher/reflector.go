package cacher

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// Backoff of the reflector after a failed list or watch.
const (
	minBackoff = 50 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// errRelist means the underlying watch cannot continue from the cache's
// revision: the cache must list again.
var errRelist = errors.New("relist needed")

// reflect keeps the cache in sync with the underlying store until ctx ends:
// list, then watch from the list's revision; re-watch from the last
// revision when the watch ends; relist when that revision is gone.
//
//	list ──► replace state (terminates watchers of an older state)
//	  ▲         │
//	  │ 410     ▼
//	  └──── watch from rv ◄──┐
//	            │  ends      │
//	            └────────────┘ (re-watch from the last rv seen)
func (c *Cacher) reflect(ctx context.Context) {
	defer c.wg.Done()
	backoff := minBackoff
	pause := func() bool {
		t := time.NewTimer(backoff)
		defer t.Stop()
		backoff = min(2*backoff, maxBackoff)
		select {
		case <-t.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for ctx.Err() == nil {
		w, err := c.listAndWatch(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			c.cfg.Logger.Warn("watch cache list failed", "prefix", c.cfg.ResourcePrefix, "err", err)
			c.setInitErr(err)
			if !pause() {
				return
			}
			continue
		}
		backoff = minBackoff
		// The first of the watch's consecutive failures at one revision.
		var failingSince time.Time
		var failingAt uint64
		for {
			err := c.consume(ctx, w)
			w.Stop()
			if ctx.Err() != nil {
				return
			}
			if err != nil && !errors.Is(err, errRelist) {
				if rev := c.Revision(); failingSince.IsZero() || rev != failingAt {
					failingSince, failingAt = time.Now(), rev
				} else if time.Since(failingSince) >= c.cfg.WatchFailureRelist {
					err = fmt.Errorf("%w: the watch kept failing at revision %d: %w", errRelist, rev, err)
				}
			}
			if errors.Is(err, errRelist) {
				c.cfg.Logger.Info("watch cache relisting", "prefix", c.cfg.ResourcePrefix, "revision", c.Revision(), "err", err)
				c.setUnready()
				break
			}
			if err != nil {
				c.cfg.Logger.Warn("watch cache watch failed", "prefix", c.cfg.ResourcePrefix, "err", err)
				if !pause() {
					return
				}
			} else {
				failingSince = time.Time{}
			}
			w, err = c.watchUnderlying(ctx, c.Revision())
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				if !storage.IsExpired(err) {
					c.cfg.Logger.Warn("watch cache re-watch failed", "prefix", c.cfg.ResourcePrefix, "err", err)
				}
				c.setUnready()
				if !storage.IsExpired(err) && !pause() {
					return
				}
				break
			}
			backoff = minBackoff
		}
	}
}

// CurrentWatcher may be implemented by the underlying store: it starts a
// watch at the store's current revision, established when the call
// returns, and returns the revision rev it starts after (it delivers
// exactly the changes after rev; a read made after it returns is at rev or
// later). etcd3.Store does: etcd registers a watch from "now" as up to
// date at once, where a watch from an older revision waits for etcd's
// 100 ms catch-up loop and, until then, gets no progress notification.
type CurrentWatcher interface {
	WatchFromCurrent(ctx context.Context, key string, opts storage.ListOptions) (w watch.Interface, rev uint64, err error)
}

// listAndWatch lists the prefix, starts the underlying watch from the
// list's revision and replaces the cache's state with the list.
func (c *Cacher) listAndWatch(ctx context.Context) (watch.Interface, error) {
	// The initialization's duration is measured from here, as upstream's
	// from the start of its startCaching.
	start := time.Now()
	if cw, ok := c.store.(CurrentWatcher); ok {
		return c.watchAndList(ctx, cw, start)
	}
	for {
		list := c.cfg.NewListFunc()
		opts := storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{GetAttrs: c.cfg.GetAttrs}}
		if err := c.store.GetList(ctx, c.cfg.ResourcePrefix, opts, list); err != nil {
			return nil, &listFailed{err: err}
		}
		la, err := meta.ListAccessor(list)
		if err != nil {
			return nil, fmt.Errorf("list %q: %w", c.cfg.ResourcePrefix, err)
		}
		rv, err := storage.ParseResourceVersion(la.GetResourceVersion())
		if err != nil {
			return nil, fmt.Errorf("list %q: %w", c.cfg.ResourcePrefix, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, fmt.Errorf("list %q: %w", c.cfg.ResourcePrefix, err)
		}
		w, err := c.watchUnderlying(ctx, rv)
		if err != nil {
			return nil, err
		}
		if rv == 0 {
			// "Events after revision 0" cannot be asked for (RV "0" means
			// "any state"); the watch started at the store's revision then,
			// so it is gapless only if nothing was written in between.
			cur, err := c.store.CurrentRevision(ctx)
			if err != nil || cur != 0 {
				w.Stop()
				if err != nil {
					return nil, fmt.Errorf("list %q: %w", c.cfg.ResourcePrefix, err)
				}
				continue
			}
		}
		if err := c.replace(items, rv, start); err != nil {
			w.Stop()
			return nil, err
		}
		return w, nil
	}
}

// watchAndList is listAndWatch for a CurrentWatcher store: the watch
// starts first, at the store's current revision W, then the list is read
// at a revision L >= W (the list is linearizable and starts after the
// watch was established). The state is the list at L; the watch's changes
// at or before L are already in it and apply skips them as old, those after
// L follow. No change is missed and none is applied twice, as with a watch
// started from L, but the watch is up to date from the start, so the
// cache's first consistent reads get their progress notification in one
// round trip instead of waiting up to 100 ms for etcd to catch the watch up
// (which it would have to whenever anything was written between the list
// and the watch: at start-up, nearly always).
func (c *Cacher) watchAndList(ctx context.Context, cw CurrentWatcher, start time.Time) (watch.Interface, error) {
	initial := false
	wopts := storage.ListOptions{
		Recursive:         true,
		ProgressNotify:    true,
		SendInitialEvents: &initial,
		Predicate:         storage.SelectionPredicate{AllowWatchBookmarks: true, GetAttrs: c.cfg.GetAttrs},
	}
	// Marked, as in watchUnderlying: consume streams a watch that can.
	w, from, err := cw.WatchFromCurrent(storage.WithStreamedWatch(ctx), c.cfg.ResourcePrefix, wopts)
	if err != nil {
		return nil, fmt.Errorf("watch %q from the current revision: %w", c.cfg.ResourcePrefix, err)
	}
	list := c.cfg.NewListFunc()
	opts := storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{GetAttrs: c.cfg.GetAttrs}}
	if err := c.store.GetList(ctx, c.cfg.ResourcePrefix, opts, list); err != nil {
		w.Stop()
		return nil, &listFailed{err: err}
	}
	la, err := meta.ListAccessor(list)
	if err != nil {
		w.Stop()
		return nil, fmt.Errorf("list %q: %w", c.cfg.ResourcePrefix, err)
	}
	rv, err := storage.ParseResourceVersion(la.GetResourceVersion())
	if err != nil {
		w.Stop()
		return nil, fmt.Errorf("list %q: %w", c.cfg.ResourcePrefix, err)
	}
	if rv < from {
		// A linearizable list cannot be older than a revision the store
		// reported before it started; the state would lack changes the
		// watch will never send.
		w.Stop()
		return nil, fmt.Errorf("list %q at revision %d, before its watch's start %d", c.cfg.ResourcePrefix, rv, from)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		w.Stop()
		return nil, fmt.Errorf("list %q: %w", c.cfg.ResourcePrefix, err)
	}
	if err := c.replace(items, rv, start); err != nil {
		w.Stop()
		return nil, err
	}
	return w, nil
}

func (c *Cacher) watchUnderlying(ctx context.Context, rv uint64) (watch.Interface, error) {
	initial := false
	opts := storage.ListOptions{
		ResourceVersion:   strconv.FormatUint(rv, 10),
		Recursive:         true,
		ProgressNotify:    true,
		SendInitialEvents: &initial,
		Predicate:         storage.SelectionPredicate{AllowWatchBookmarks: true, GetAttrs: c.cfg.GetAttrs},
	}
	// Marked: consume reads a watch that can stream with Stream (see
	// consume); any other watch ignores the mark.
	w, err := c.store.Watch(storage.WithStreamedWatch(ctx), c.cfg.ResourcePrefix, opts)
	if err != nil {
		return nil, fmt.Errorf("watch %q from %d: %w", c.cfg.ResourcePrefix, rv, err)
	}
	return w, nil
}

// consume applies the events of the underlying watch until it ends. It
// returns errRelist (wrapped) when the cache must list again, another error
// when the watch failed, nil when it just ended.
//
// Events sharing a revision (one etcd transaction) are applied together:
// they are held until the revision is known to be complete (an event of a
// later revision, or a BOOKMARK, which a RevisionEndMarker store sends
// right after a revision's last event). Held events are dropped when the
// watch ends: the cache re-watches from its revision, before theirs, and
// gets the whole revision again.
func (c *Cacher) consume(ctx context.Context, w watch.Interface) error {
	var held []watch.Event // events of revision heldRV, not applied yet
	var heldTimes []eventTimes
	var heldRV, applied uint64
	// timer tells when the store received the event being handled (set
	// while the watch streams; see receiptTimer).
	var timer receiptTimer
	flush := func() error {
		if len(held) == 0 {
			return nil
		}
		applied = heldRV
		err := c.apply(held, heldTimes)
		clear(held)
		held, heldTimes = held[:0], heldTimes[:0]
		if err != nil {
			return fmt.Errorf("%w: %w", errRelist, err)
		}
		return nil
	}
	handle := func(ev watch.Event) error {
		switch ev.Type {
		case watch.Added, watch.Modified, watch.Deleted:
			rv, err := storage.ObjectResourceVersion(ev.Object)
			if err != nil {
				return fmt.Errorf("%w: event without a revision: %w", errRelist, err)
			}
			if len(held) > 0 && rv != heldRV {
				if err := flush(); err != nil {
					return err
				}
			}
			held, heldRV = append(held, ev), rv
			heldTimes = append(heldTimes, c.receiptTimes(timer))
			if !c.marked {
				return flush()
			}
		case watch.Bookmark:
			if err := flush(); err != nil {
				return err
			}
			rv, err := storage.ObjectResourceVersion(ev.Object)
			if err != nil {
				c.cfg.Logger.Warn("watch cache got a bookmark without a revision", "prefix", c.cfg.ResourcePrefix, "err", err)
				return nil
			}
			if rv > applied { // a revision's end mark needs no lock
				c.advance(rv)
			}
		case watch.Error:
			if st, ok := ev.Object.(*metav1.Status); ok {
				if st.Code == http.StatusGone {
					return fmt.Errorf("%w: %s", errRelist, st.Message)
				}
				return fmt.Errorf("underlying watch: %s (%d)", st.Message, st.Code)
			}
			return fmt.Errorf("underlying watch: error event %T", ev.Object)
		}
		return nil
	}
	// A watch that can stream (the etcd3 store's, the memory store's)
	// runs its loop here, on the reflector's goroutine, and hands each
	// event straight to handle: one goroutine wake-up less between etcd
	// and the cache's watchers than reading its result channel. Events,
	// their order and the errors are the same either way.
	if s, ok := w.(eventStreamer); ok {
		timer, _ = w.(receiptTimer)
		var err error
		if s.Stream(func(ev watch.Event) bool {
			err = handle(ev)
			return err == nil
		}, nil) {
			if err != nil {
				return err
			}
			return ctx.Err()
		}
		timer = nil
	}
	for {
		var ev watch.Event
		var ok bool
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok = <-w.ResultChan():
		}
		if !ok {
			return nil
		}
		if err := handle(ev); err != nil {
			return err
		}
	}
}

// eventStreamer is a watch that can deliver its events by calling its reader
// back on the reader's goroutine (as handlers.eventStreamer).
type eventStreamer interface {
	Stream(send func(watch.Event) bool, idle func() bool) bool
}

func (c *Cacher) newEntry(obj runtime.Object) (*entry, error) {
	key, err := c.cfg.KeyFunc(obj)
	if err != nil {
		return nil, err
	}
	rv, err := storage.ObjectResourceVersion(obj)
	if err != nil {
		return nil, fmt.Errorf("object %q: %w", key, err)
	}
	ls, fs, err := c.cfg.GetAttrs(obj)
	if err != nil {
		return nil, fmt.Errorf("attributes of %q: %w", key, err)
	}
	return newCacheEntry(key, obj, rv, ls, fs), nil
}

// replace sets the cache's state to items at revision rv, with an empty
// event window, and terminates every watcher (they may have missed events).
// start is when the list and watch that read items began.
func (c *Cacher) replace(items []runtime.Object, rv uint64, start time.Time) error {
	entries := make([]*entry, 0, len(items))
	for _, obj := range items {
		e, err := c.newEntry(obj)
		if err != nil {
			return fmt.Errorf("list %q: %w", c.cfg.ResourcePrefix, err)
		}
		entries = append(entries, e)
	}
	st := objStore{}
	for _, e := range entries {
		st.put(e) // lists come sorted: this appends
	}
	c.resetPacker()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.terminateAllLocked()
	c.objects = st
	c.metrics.Capacity(len(c.events.buf), c.cfg.EventWindow)
	c.events.reset(c.cfg.EventWindow)
	c.rv, c.windowStart, c.stateSince, c.eventRV = rv, rv, rv, 0
	c.sentRV.Store(rv)
	c.snaps.reset()
	c.metrics.Initialized(rv, time.Since(start))
	c.ready = true
	c.initErr = nil
	c.initFailed.Store(false)
	c.notifyLocked()
	c.cfg.Logger.Debug("watch cache initialized", "prefix", c.cfg.ResourcePrefix, "revision", rv, "objects", len(entries))
	return nil
}

func (c *Cacher) setUnready() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ready {
		c.unreadySince = time.Now()
	}
	c.ready = false
	c.notifyLocked()
}

// advance moves the cache's revision to rv (a bookmark of the underlying
// store: nothing under the prefix changed up to rv).
func (c *Cacher) advance(rv uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rv > c.rv {
		c.rv = rv
		c.sentRV.Store(rv)
		c.metrics.ResourceVersion(rv)
		c.notifyLocked()
	}
}

// apply applies the changes of the underlying store at one revision (one
// event, or several for a transaction), in the store's order: the object
// store, the event window and every interested watcher. Reads see the
// revision whole: the cache's revision moves once all of its events are
// in. A revision the cache already has is skipped, except more events of
// the revision it last applied (a store that does not mark revision ends
// sends a transaction's events one at a time).
func (c *Cacher) apply(changes []watch.Event, times []eventTimes) error {
	entries := make([]*entry, len(changes))
	for i, ch := range changes {
		c.metrics.EventReceived()
		e, err := c.newEntry(ch.Object)
		if err != nil {
			return err
		}
		entries[i] = e
	}
	c.shareWithCached(entries)
	rv := entries[0].rv
	now := c.cfg.Clock.Now()
	c.mu.Lock()
	if rv < c.rv || (rv == c.rv && c.eventRV != rv) {
		c.mu.Unlock()
		c.cfg.Logger.Debug("watch cache skipped an old event", "key", entries[0].key, "revision", rv, "at", c.rv)
		return nil
	}
	evs := make([]*event, len(entries))
	for i, cur := range entries {
		c.seq++
		ev := &event{key: cur.key, rv: rv, seq: c.seq, at: now, cur: cur, times: times[i]}
		if changes[i].Type == watch.Deleted {
			ev.typ = watch.Deleted
			ev.prev = c.objects.remove(cur.key)
		} else {
			ev.prev = c.objects.put(cur)
			ev.typ = watch.Added
			if ev.prev != nil {
				ev.typ = watch.Modified
			}
		}
		c.appendLocked(ev)
		c.noteLocked()
		evs[i] = ev
	}
	c.rv, c.stateSince, c.eventRV = rv, rv, rv
	c.metrics.ResourceVersion(rv)
	c.notifyLocked()
	c.mu.Unlock()
	// Dispatched outside the lock (reads go on while a slow watcher is
	// waited for), in order: apply runs on the reflector goroutine only.
	// Bookmarks carry rv only once every event of rv is handed over.
	for _, ev := range evs {
		c.dispatch(ev)
		c.metrics.EventDispatched()
	}
	c.sentRV.Store(rv)
	c.packQueued()
	return nil
}

// appendLocked adds ev to the event window, growing the window while its
// events are fresh, shrinking it when half of them are stale, and evicting
// the oldest otherwise.
func (c *Cacher) appendLocked(ev *event) {
	r := &c.events
	if r.full() {
		size := len(r.buf)
		fresh := c.cfg.EventFreshness
		switch {
		case size > c.cfg.EventWindow && ev.at.Sub(r.at(size/2).at) > fresh:
			c.dropLocked(size / 2)
			r.resize(max(size/2, c.cfg.EventWindow))
		case size < c.cfg.MaxEventWindow && fresh > 0 && ev.at.Sub(r.at(0).at) < fresh:
			r.resize(min(2*size, c.cfg.MaxEventWindow))
		}
		c.metrics.Capacity(size, len(r.buf))
	}
	if r.full() {
		c.dropLocked(1)
	}
	r.push(ev)
}

// dropLocked evicts the k oldest events, moving the window's start.
func (c *Cacher) dropLocked(k int) {
	if last := c.events.dropOldest(k); last != nil && last.rv > c.windowStart {
		c.windowStart = last.rv
	}
}

// forgetBefore makes the cache answer 410 for watches from revisions older
// than rev-1, as the underlying store does after a compaction at rev (events
// at rev and later stay). Tests use it to line the cache up with a
// compaction of the underlying store.
func (c *Cacher) forgetBefore(rev uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rev > c.compacted {
		c.compacted = rev
		c.expireSnapshotsLocked()
	}
	if rev == 0 || rev-1 <= c.windowStart {
		return
	}
	c.windowStart = rev - 1
	for c.events.n > 0 && c.events.at(0).rv <= c.windowStart {
		c.events.dropOldest(1)
	}
}
