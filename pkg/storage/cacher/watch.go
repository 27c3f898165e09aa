package cacher

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unique"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
	"github.com/kapi-dev/kapi/pkg/storage/watchinit"
)

// cacheWatcher is one watch served from the cache. The dispatcher puts
// events on input without blocking (a watcher whose buffer stays full
// lags, see dispatch); the watcher filters them and delivers them: on
// result, from a goroutine of its own started by the first ResultChan, or
// by calling the reader back on the reader's goroutine (Stream).
type cacheWatcher struct {
	c         *Cacher
	key       string
	prefix    string // scope prefix when recursive
	recursive bool
	pred      storage.SelectionPredicate
	all       bool // pred matches everything
	bookmarks bool // periodic bookmarks wanted
	// shared: the watch takes cacheable.Objects for its events' objects
	// (encoded once for all such watchers); initial events and bookmarks
	// stay plain objects.
	shared bool
	// from is the revision the watch starts after: it gets no event of
	// from or older. after is the revision of the last event sent (from,
	// before the first): no bookmark goes back before it. seen is the
	// number (event.seq) of the last event sent or covered by the initial
	// state: events may share a revision, so seq tells which were sent.
	from, after, seen uint64

	input chan *event
	// lagging: the watcher's buffer stayed full past the dispatch budget;
	// the dispatcher skips it and it catches up from the event window,
	// from missedFrom (the seq of the first event it did not get). The
	// signal sigCatchUp tells its delivery loop.
	lagging    atomic.Bool
	missedFrom atomic.Uint64
	// signals are what the delivery loop must act on besides events
	// (sigCatchUp, sigDone); see signal.
	signals atomic.Uint32
	// dispatched are the watcher's counters of the dispatch latency
	// histogram, made once the initial state and the backlog are sent:
	// the events delivered from then on are counted (nil: not counted;
	// see dispatchtimes.go). The delivery loop's only.
	dispatched *storagemetrics.DispatchCounter
	// lastSent is when the watcher's last counted delivery returned
	// (monoNow), 0 once it may have waited since (see sendEvent).
	lastSent int64

	result   chan watch.Event
	done     chan struct{}
	stopOnce sync.Once
	// start serves the watch on the calling goroutine (see serve); it is
	// called once, by the first of ResultChan (on a new goroutine) and
	// Stream, unless the watch ends first (release).
	start     func(send func(watch.Event) bool, idle func() bool)
	startOnce sync.Once
	// stopOnCtx unregisters the terminate that the watch's context ending
	// calls.
	stopOnCtx func() bool

	// prefixHandle keeps prefix's canonical copy, whose bytes every
	// watcher of the same scope shares: the dispatcher compares each
	// event's key with the prefix of every watcher, and with each
	// watcher's own copy that read a thousand cold copies per event with
	// 1,000 watchers (as the memory store's writer did: memeqbody 1.6% of
	// the server's CPU there).
	prefixHandle unique.Handle[string]
}

var _ watch.Interface = (*cacheWatcher)(nil)

// ResultChan implements watch.Interface. The first call starts the
// goroutine delivering the events on the channel.
func (w *cacheWatcher) ResultChan() <-chan watch.Event {
	w.startOnce.Do(func() {
		go func() {
			defer close(w.result)
			w.start(w.sendResult, nil)
		}()
	})
	return w.result
}

// sendResult hands ev to the reader of result; false once the watch ended.
func (w *cacheWatcher) sendResult(ev watch.Event) bool {
	return storage.SendEvent(w.result, w.done, ev)
}

// Stream delivers the watch's events by calling send on the caller's
// goroutine, in order, until send returns false or the watch ends
// (stopped, terminated, its context done); idle is called whenever no
// event is waiting (the caller flushes what it wrote) and ends the watch
// if it returns false. The watch is over when Stream returns. Events are
// those ResultChan would deliver, without their hand-over from the
// watcher's goroutine to the reader's: with many watchers, waking two
// goroutines per event and watcher was much of what an event cost. It
// returns false at once, delivering nothing, if ResultChan was called
// first (the events go there).
func (w *cacheWatcher) Stream(send func(watch.Event) bool, idle func() bool) bool {
	if !storage.ClaimStream(&w.startOnce) {
		return false
	}
	defer close(w.result) // for a ResultChan called meanwhile
	w.start(send, idle)
	return true
}

// Stop implements watch.Interface: the result channel closes soon after.
func (w *cacheWatcher) Stop() {
	w.c.mu.Lock()
	delete(w.c.watchers, w)
	w.c.mu.Unlock()
	w.terminate()
}

// terminate ends the watch: its delivery returns soon; if it was never
// started, it never will be, and the watch is released here.
func (w *cacheWatcher) terminate() {
	w.stopOnce.Do(func() {
		close(w.done)
		w.signal(sigDone)
	})
	w.startOnce.Do(w.release)
}

// Signals of a watcher's delivery loop (cacheWatcher.signals).
const (
	// sigCatchUp: the watcher is lagging (see catchUp).
	sigCatchUp uint32 = 1 << iota
	// sigDone: the watch is over (done is closed).
	sigDone
)

// nudge is put on a watcher's input to wake its delivery loop for a
// signal; it is no event (deliver skips it).
var nudge = &event{}

// signal tells w's delivery loop about s. The loop waits on input alone
// (a receive from one channel costs the waiting side and the dispatcher
// less than a select over several, paid per event and watcher), so s is
// set first and then, unless a signal was already pending (its nudge
// went or will be seen), a nudge is put on input without waiting. The
// loop looks at the signals before each wait, and again after anything
// that may have read a nudge without acting on it (catchUp draining
// input): either it sees s there, or it was waiting (input empty) or
// will find input not empty, so it never waits with s pending. A full
// input needs no nudge: the loop is not waiting then. A nudge may stay in
// input after its signal was seen and takes one of its places until read
// (the dispatcher may then find the buffer full one event early).
func (w *cacheWatcher) signal(s uint32) {
	if w.signals.Or(s) != 0 {
		return
	}
	select {
	case w.input <- nudge:
	default:
	}
}

// release is the end of a watch that was never started: its result
// channel closes and the cache no longer waits for it.
// (The terminate registered on its context stays until that context
// ends, a no-op then: stopOnCtx may not be set yet.)
func (w *cacheWatcher) release() {
	close(w.result)
	w.c.wg.Done()
}

func (w *cacheWatcher) inScope(key string) bool {
	if w.recursive {
		return len(key) > len(w.prefix) && key[:len(w.prefix)] == w.prefix
	}
	return key == w.key
}

func (w *cacheWatcher) matches(e *entry) bool {
	if w.all {
		return true
	}
	return (w.pred.Label == nil || w.pred.Label.Matches(e.labels)) &&
		(w.pred.Field == nil || w.pred.Field.Matches(e.fields))
}

// Watch implements [storage.Interface]. It is served from the cache when the
// cache can (see the package doc), by the underlying store otherwise.
//
// Resource versions: "" starts from a state at least as new as the
// underlying store's current revision; "0" from the cache's state; "N"
// after revision N (ErrCodeExpired if N is older than the event window).
// Without initial events, "" and "0" start after the current revision.
func (c *Cacher) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("watch %q: %w", key, err)
	}
	rv, err := storage.ParseRequestResourceVersion(key, opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	if !c.covers(key, opts.Recursive) {
		return c.watchThrough(ctx, key, opts)
	}
	if err := c.initFailure(); err != nil {
		return nil, err
	}
	sendInitial := rv == 0
	if opts.SendInitialEvents != nil {
		sendInitial = *opts.SendInitialEvents
	}
	endBookmark := sendInitial && opts.SendInitialEvents != nil && opts.Predicate.AllowWatchBookmarks

	// need is the revision the watch must start at or after.
	need, known := rv, false
	if opts.ResourceVersion == "" {
		if need, err = c.store.CurrentRevision(ctx); err != nil {
			return nil, fmt.Errorf("watch %q: %w", key, err)
		}
		known = true
	}
	if sendInitial {
		// The initial state comes from the cache, which must be at need.
		ok, err := c.waitFresh(ctx, need, known)
		if err != nil {
			return nil, fmt.Errorf("watch %q: %w", key, err)
		}
		if !ok {
			if err := c.initFailure(); err != nil {
				return nil, err
			}
			return c.watchThrough(ctx, key, opts)
		}
	} else {
		if !c.waitReady(ctx) {
			if err := c.initFailure(); err != nil {
				return nil, err
			}
			return c.watchThrough(ctx, key, opts)
		}
		if need > c.Revision() && !known {
			// A future revision is the underlying store's to judge.
			cur, err := c.store.CurrentRevision(ctx)
			if err != nil {
				return nil, fmt.Errorf("watch %q: %w", key, err)
			}
			if cur < need {
				return c.watchThrough(ctx, key, opts)
			}
		}
	}

	w := &cacheWatcher{
		c:         c,
		key:       key,
		prefix:    scopePrefix(key),
		recursive: opts.Recursive,
		pred:      opts.Predicate,
		all:       opts.Predicate.Empty(),
		bookmarks: opts.ProgressNotify && opts.Predicate.AllowWatchBookmarks,
		shared:    cacheable.Wanted(ctx),
		input:     make(chan *event, c.cfg.WatcherBuffer),
		result:    make(chan watch.Event),
		done:      make(chan struct{}),
	}
	w.prefixHandle = unique.Make(w.prefix)
	w.prefix = w.prefixHandle.Value()
	var initial []*entry
	var backlog []*event
	c.mu.Lock()
	if c.stopped || !c.ready {
		c.mu.Unlock()
		return c.watchThrough(ctx, key, opts)
	}
	switch {
	case sendInitial:
		w.from, w.seen = c.rv, c.seq
		if w.recursive {
			c.objects.scan(w.prefix, func(e *entry) { initial = append(initial, e) })
		} else if e := c.objects.get(key); e != nil {
			initial = []*entry{e}
		}
	case need == 0:
		w.from, w.seen = c.rv, c.seq
	case need < c.windowStart:
		start := c.windowStart
		c.mu.Unlock()
		return nil, storage.NewError(storage.ErrCodeExpired, key, int64(need),
			fmt.Sprintf("too old resource version: %d (%d)", need, start))
	default:
		w.from = need
		if need < c.rv {
			backlog = c.events.since(need)
		}
		// The backlog is the last events of the window: the watcher has
		// seen every event before it.
		w.seen = c.seq - uint64(len(backlog))
	}
	w.after = w.from
	c.watchers[w] = struct{}{}
	c.wg.Add(1)
	c.mu.Unlock()

	c.stats.watchesCached.Add(1)
	// ctx ending stops the watch as Stop does, so that delivery waits on
	// one channel (done) rather than two: a select's cost grows with its
	// channels, and with many watchers it is paid per event and watcher.
	w.stopOnCtx = context.AfterFunc(ctx, w.terminate)
	w.start = func(send func(watch.Event) bool, idle func() bool) {
		w.serve(ctx, initial, endBookmark, backlog, send, idle)
	}
	if !storage.StreamedWatch(ctx) {
		w.ResultChan() // delivery starts now; a reader may stream only when it said so
	}
	return w, nil
}

func (c *Cacher) watchThrough(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	c.stats.watchesDelegated.Add(1)
	return c.store.Watch(ctx, key, opts)
}

// serve delivers the initial state, the backlog and then live events
// through send until the watch is stopped, terminated, or ctx ends (or
// send or idle returns false). idle, if not nil, is called whenever no
// event is waiting.
func (w *cacheWatcher) serve(ctx context.Context, initial []*entry, endBookmark bool, backlog []*event, send func(watch.Event) bool, idle func() bool) {
	defer w.c.wg.Done()
	defer w.Stop()
	defer w.stopOnCtx()
	for _, e := range initial {
		if !w.matches(e) {
			continue
		}
		if !send(watch.Event{Type: watch.Added, Object: e.object()}) {
			return
		}
		w.c.metrics.InitEvent()
	}
	if endBookmark {
		obj, err := w.c.bookmarkObject(w.from, true)
		if err != nil {
			send(errorEvent(err))
			return
		}
		if !send(watch.Event{Type: watch.Bookmark, Object: obj}) {
			return
		}
	}
	for _, ev := range backlog {
		if w.inScope(ev.key) && !w.deliver(ev, send) {
			return
		}
	}
	// The initial state and the backlog are handed over: the watch no
	// longer needs its priority-and-fairness seat (upstream's
	// cacheWatcher.process signals here too).
	watchinit.Initialized(ctx)
	w.dispatched = w.c.dispatchLatency.NewCounter()
	defer w.dispatched.Close()
	// A watch with a deadline that wants bookmarks gets one 2 s before the
	// deadline, as kube's watch cache sends it, so the client resumes from
	// a fresh resourceVersion rather than the last event's.
	// The bookmark is queued from the timer's goroutine, as the periodic
	// ones are from the bookmark loop's (sendBookmarkTo keeps it behind
	// the events already queued).
	defer w.c.bookmarkBeforeDeadline(ctx, w)()
	for {
		// Signals are looked at before every event and before every wait,
		// which is on input alone (see signal).
		if w.signals.Load() != 0 {
			sig := w.signals.Swap(0)
			if sig&sigDone != 0 {
				return
			}
			w.lastSent = 0 // catchUp waits for the cache's lock
			if sig&sigCatchUp != 0 && !w.catchUp(send) {
				return
			}
			// catchUp reads input too and may have taken the nudge of a
			// signal given meanwhile: look again before waiting.
			continue
		}
		if idle != nil {
			select {
			case ev := <-w.input:
				if !w.deliver(ev, send) {
					return
				}
				continue
			default:
			}
			w.lastSent = 0
			if !idle() {
				return
			}
		}
		if len(w.input) == 0 {
			w.lastSent = 0 // about to wait
		}
		if !w.deliver(<-w.input, send) {
			return
		}
	}
}

// bookmarkBeforeDeadline queues a bookmark for w 2 s before ctx's
// deadline when w wants bookmarks (as kube's watch cache sends one, so
// the client resumes from a fresh resourceVersion rather than the last
// event's), and returns what cancels it.
func (c *Cacher) bookmarkBeforeDeadline(ctx context.Context, w *cacheWatcher) (stop func()) {
	deadline, ok := ctx.Deadline()
	if !w.bookmarks || !ok {
		return func() {}
	}
	d := time.Until(deadline) - storage.DeadlineBookmarkLead
	if d <= 0 {
		return func() {}
	}
	t := time.AfterFunc(d, func() { c.sendBookmarkTo(w) })
	return func() { t.Stop() }
}

// catchUp delivers, while the watcher is lagging, what it has queued and
// then the events from the first one it missed, read from the event
// window. A watcher whose first missed event has left the window is
// terminated (its client resumes from its last revision, and relists on a
// 410). false ends the watch.
func (w *cacheWatcher) catchUp(send func(watch.Event) bool) bool {
	c := w.c
	for w.lagging.Load() {
		// What is queued is older than anything missed.
	drain:
		for {
			select {
			case ev := <-w.input:
				if !w.deliver(ev, send) {
					return false
				}
			default:
				break drain
			}
		}
		missed := w.missedFrom.Load()
		c.mu.Lock()
		backlog, ok := c.events.fromSeq(missed)
		if !ok {
			start := c.windowStart
			c.mu.Unlock()
			c.terminateSlow(w, w.after, fmt.Sprintf("its next event has left the event window (after revision %d)", start))
			return false
		}
		// Events added from now on are dispatched to it again (those
		// already in backlog too: deliver skips what it has seen).
		w.lagging.Store(false)
		c.mu.Unlock()
		for _, ev := range backlog {
			if w.inScope(ev.key) && !w.deliver(ev, send) {
				return false
			}
		}
	}
	return true
}

// deliver turns one cache event into what this watcher sees (nothing,
// ADDED, MODIFIED, DELETED or BOOKMARK) and sends it; false ends the watch.
func (w *cacheWatcher) deliver(ev *event, send func(watch.Event) bool) bool {
	if ev == nudge {
		return true
	}
	if ev.typ == watch.Bookmark {
		if ev.rv < w.after {
			return true
		}
		return send(watch.Event{Type: watch.Bookmark, Object: ev.cur.object()})
	}
	if ev.seq <= w.seen || ev.rv <= w.from {
		return true
	}
	w.seen, w.after = ev.seq, ev.rv
	if ev.typ == watch.Deleted {
		if w.matches(ev.cur) {
			return w.sendEvent(ev, watch.Event{Type: watch.Deleted, Object: w.current(ev)}, send)
		}
		return true
	}
	curOK := w.matches(ev.cur)
	prevOK := ev.prev != nil && w.matches(ev.prev)
	switch {
	case curOK && prevOK:
		return w.sendEvent(ev, watch.Event{Type: watch.Modified, Object: w.current(ev)}, send)
	case curOK:
		return w.sendEvent(ev, watch.Event{Type: watch.Added, Object: w.current(ev)}, send)
	case prevOK:
		if w.shared {
			return w.sendEvent(ev, watch.Event{Type: watch.Deleted, Object: ev.sharedLeaveObject()}, send)
		}
		return w.sendEvent(ev, watch.Event{Type: watch.Deleted, Object: ev.leaveObject()}, send)
	}
	return true
}

// current is ev's object as this watcher takes it.
func (w *cacheWatcher) current(ev *event) runtime.Object {
	if w.shared {
		return ev.sharedObject()
	}
	return ev.cur.object()
}

// dispatch hands ev to every watcher it concerns: first without
// blocking; then the watchers whose buffers are full are waited for, all
// together, for at most what is left of the dispatch time budget (as kube's
// watch cache does). A watcher still full after that is not terminated, as
// kube would: it is marked lagging and catches up from the event window on
// its own (see catchUp), so a busy but healthy watcher is never closed,
// and the dispatcher never waits on it again until it has caught up.
// Called without c.mu, by the reflector only (events stay in order).
func (c *Cacher) dispatch(ev *event) {
	var blocked []*cacheWatcher
	c.mu.RLock()
	for w := range c.watchers {
		if !w.inScope(ev.key) || w.lagging.Load() {
			continue
		}
		select {
		case w.input <- ev:
		default:
			blocked = append(blocked, w)
		}
	}
	c.mu.RUnlock()
	if len(blocked) == 0 {
		return
	}
	start := time.Now()
	budget := c.budget.take(start)
	timer := time.NewTimer(budget)
	defer timer.Stop()
	expired := budget <= 0
	for _, w := range blocked {
		if !expired {
			select {
			case w.input <- ev:
				continue
			case <-w.done:
				continue
			case <-timer.C:
				expired = true
			}
		}
		select { // the budget is spent: a last chance, without waiting
		case w.input <- ev:
		case <-w.done:
		default:
			w.missedFrom.Store(ev.seq)
			w.lagging.Store(true)
			w.signal(sigCatchUp)
			c.cfg.Logger.Debug("watch cache watcher lagging: it catches up from the event window",
				"key", w.key, "recursive", w.recursive, "buffer", cap(w.input), "revision", ev.rv)
		}
	}
	if !expired {
		now := time.Now()
		c.budget.giveBack(budget-now.Sub(start), now)
	}
}

// terminateSlow ends a watcher that fell too far behind.
func (c *Cacher) terminateSlow(w *cacheWatcher, rv uint64, why string) {
	c.mu.Lock()
	_, ok := c.watchers[w]
	delete(c.watchers, w)
	c.mu.Unlock()
	w.terminate()
	if !ok {
		return // stopped meanwhile
	}
	c.metrics.WatcherTerminated()
	c.cfg.Logger.Warn("watch cache terminated a slow watcher: "+why,
		"key", w.key, "recursive", w.recursive, "buffer", cap(w.input), "revision", rv)
}

// timeBudget is how long the dispatcher may still block on slow watchers:
// it refills at a rate per second up to a maximum (kube's watch cache
// keeps such a budget too). Used by the reflector goroutine only.
type timeBudget struct {
	left, max, perSecond time.Duration
	last                 time.Time
}

func newTimeBudget(maxBudget, perSecond time.Duration, now time.Time) timeBudget {
	return timeBudget{left: maxBudget, max: maxBudget, perSecond: perSecond, last: now}
}

// take returns the whole budget left (refilled up to now) and empties it.
func (b *timeBudget) take(now time.Time) time.Duration {
	elapsed := now.Sub(b.last)
	b.last = now
	b.left = min(b.max, b.left+time.Duration(float64(b.perSecond)*elapsed.Seconds()))
	left := b.left
	b.left = 0
	return left
}

// giveBack returns the unused part of what take returned.
func (b *timeBudget) giveBack(unused time.Duration, now time.Time) {
	if unused > 0 {
		b.left = min(b.max, b.left+unused)
	}
	b.last = now
}

// terminateAllLocked ends every watcher (their result channels close).
func (c *Cacher) terminateAllLocked() {
	for w := range c.watchers {
		delete(c.watchers, w)
		w.terminate()
	}
}

// bookmarkLoop sends a BOOKMARK at the cache's revision to every watcher
// that asked for progress, every BookmarkInterval.
func (c *Cacher) bookmarkLoop(ctx context.Context) {
	defer c.wg.Done()
	t := time.NewTicker(c.cfg.BookmarkInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.sendBookmarks()
			c.mu.Lock()
			c.expireSnapshotsLocked()
			c.mu.Unlock()
		}
	}
}

func (c *Cacher) sendBookmarks() {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.ready || c.rv == 0 {
		return
	}
	var ev *event
	for w := range c.watchers {
		if !w.bookmarks || w.lagging.Load() {
			continue // a lagging watcher must not get one ahead of its backlog
		}
		if ev == nil {
			if ev = c.bookmarkEventLocked(); ev == nil {
				return
			}
		}
		select {
		case w.input <- ev:
		default: // a busy watcher skips this bookmark
		}
	}
}

// sendBookmarkTo queues one bookmark at the cache's revision for w, after
// the events already queued for it (so it never runs ahead of them).
func (c *Cacher) sendBookmarkTo(w *cacheWatcher) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.ready || c.rv == 0 {
		return
	}
	if _, ok := c.watchers[w]; !ok || w.lagging.Load() {
		return
	}
	if ev := c.bookmarkEventLocked(); ev != nil {
		select {
		case w.input <- ev:
		default: // a busy watcher skips this bookmark
		}
	}
}

// bookmarkEventLocked builds a bookmark event at the revision dispatched, or
// nil (logged) if the object cannot be built.
func (c *Cacher) bookmarkEventLocked() *event {
	rv := c.sentRV.Load()
	obj, err := c.bookmarkObject(rv, false)
	if err != nil {
		c.cfg.Logger.Warn("watch cache cannot build a bookmark", "prefix", c.cfg.ResourcePrefix, "err", err)
		return nil
	}
	return &event{typ: watch.Bookmark, rv: rv, cur: newCacheEntry("", obj, rv, nil, nil)}
}

// bookmarkObject returns an empty object carrying only resourceVersion rv,
// annotated as the end of the initial events if initialEnd.
func (c *Cacher) bookmarkObject(rv uint64, initialEnd bool) (runtime.Object, error) {
	obj := c.cfg.NewFunc()
	if err := storage.SetObjectResourceVersion(obj, rv); err != nil {
		return nil, fmt.Errorf("bookmark: %w", err)
	}
	if initialEnd {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, fmt.Errorf("bookmark: %w", err)
		}
		m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	return obj, nil
}
