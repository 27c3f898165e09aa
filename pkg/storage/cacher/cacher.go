package cacher

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
)

// ProgressRequester may be implemented by the underlying store: it asks for
// a progress notification (a BOOKMARK carrying the current revision) on the
// store's watches that asked for ProgressNotify, now rather than at the next
// periodic one (etcd's RequestProgress). The cacher calls it while reads
// wait for the cache to catch up.
type ProgressRequester interface {
	RequestWatchProgress(ctx context.Context) error
}

// RevisionEndMarker may be implemented by the underlying store. If
// MarksRevisionEnds is true, its watches with ProgressNotify and
// Predicate.AllowWatchBookmarks send a BOOKMARK at revision R right after
// the last event of R (etcd3.Store does: etcd delivers a revision's events
// together). The cacher then applies the events of one revision (an etcd
// transaction changes many keys at one revision) together, so no read
// sees a revision half applied. Without it, each event is applied as it
// comes; a revision's later events are still accepted.
type RevisionEndMarker interface {
	MarksRevisionEnds() bool
}

// Counter may be implemented by the underlying store: it counts the
// objects stored under key (recursively). The cacher's object count falls
// back to it until the cache is ready.
type Counter interface {
	Count(ctx context.Context, key string) (int64, error)
}

// SizeEstimator is implemented by a store that can estimate the stored
// size of a resource's objects from the values it read (etcd3's): the
// cache enables it and reports its estimate for the cache's current keys
// in apiserver_resource_size_estimate_bytes, as upstream's watch cache
// enables its store's estimator.
type SizeEstimator interface {
	EnableSizeEstimation()
	EstimateSize(keys []string) (int64, bool)
}

// Cacher is the watch cache of one resource; see the package doc. It
// implements [storage.Interface] and is safe for concurrent use. Stop it
// when done.
type Cacher struct {
	cfg      Config
	store    storage.Interface
	progress ProgressRequester // nil if the store cannot be asked
	prefix   string            // ResourcePrefix + "/"
	// marked: the store's watch marks the end of each revision (see
	// RevisionEndMarker).
	marked bool

	cancel context.CancelFunc // ends the reflector and the bookmark loop
	wg     sync.WaitGroup     // reflector, bookmark loop, watcher goroutines

	stats   stats
	metrics *storagemetrics.Cache // nil: none
	untrack func()                // stops the object count (and size estimate)

	// dispatchLatency is the dispatch latency histogram (nil: none; see
	// dispatchtimes.go).
	dispatchLatency *storagemetrics.Dispatch

	// sentRV is the revision up to which every event has been handed to
	// the watchers (at most rv): bookmarks carry it, never running ahead
	// of an event still being dispatched.
	sentRV atomic.Uint64
	budget timeBudget // of the dispatcher's waits for slow watchers

	progressMu   sync.Mutex
	lastProgress time.Time

	revs revisionReads // consistent gets' reads of the current revision
	// readRevision is store.CurrentRevision, made once: a method value
	// made per get is an allocation per get.
	readRevision func(context.Context) (uint64, error)

	// packer packs the event window's superseded states (reflector only).
	packer packer

	mu          sync.RWMutex
	stopped     bool
	ready       bool
	rv          uint64 // the revision the cache is at
	seq         uint64 // the number of the last event applied (event.seq)
	eventRV     uint64 // the revision of the last event applied
	windowStart uint64 // every event after this revision is in events
	objects     objStore
	stateSince  uint64 // objects are the state at every revision from stateSince to rv
	compacted   uint64 // revisions before it are compacted (forgetBefore)
	snaps       snapshots
	consistency consistencyState // the consistency checker's verdict
	events      ring
	watchers    map[*cacheWatcher]struct{}
	changed     chan struct{} // closed and replaced when rv or ready change
	// unreadySince is when the cache last stopped being ready (or was
	// made); initErr is why its last attempt to list failed while not
	// ready (nil: none failed since). See initFailure.
	unreadySince time.Time
	initErr      error
	// initFailed mirrors initErr != nil, read without the lock by every
	// list and watch (see initFailure).
	initFailed atomic.Bool
}

var _ storage.Interface = (*Cacher)(nil)

// New validates cfg and starts the cache: its reflector lists and watches
// the underlying store in the background (New does not wait for it; reads
// wait up to Config.ReadyWait).
func New(cfg Config) (*Cacher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("cacher config: %w", err)
	}
	cfg = cfg.withDefaults()
	c := &Cacher{
		cfg:      cfg,
		store:    cfg.Storage,
		prefix:   cfg.ResourcePrefix + "/",
		events:   newRing(cfg.EventWindow),
		watchers: make(map[*cacheWatcher]struct{}),
		changed:  make(chan struct{}),

		unreadySince: time.Now(),
	}
	c.readRevision = c.store.CurrentRevision
	c.progress, _ = cfg.Storage.(ProgressRequester)
	if m, ok := cfg.Storage.(RevisionEndMarker); ok {
		c.marked = m.MarksRevisionEnds()
	}
	c.budget = newTimeBudget(cfg.DispatchBudget, cfg.DispatchBudgetRefill, time.Now())
	res := cfg.Metrics.Resource(cfg.GroupResource)
	c.metrics = res.Cache()
	c.metrics.Capacity(0, cfg.EventWindow)
	c.dispatchLatency = c.metrics.Dispatch()
	c.untrack = res.TrackObjects(c.countObjects)
	// Without metrics (kapi's internal stores) nobody reads the estimate:
	// the store need not keep sizes.
	if est, ok := cfg.Storage.(SizeEstimator); ok && res != nil {
		est.EnableSizeEstimation()
		untrackSize := res.TrackSize(func(context.Context) (int64, error) { return c.estimateSize(est) })
		untrackObjects := c.untrack
		c.untrack = func() { untrackObjects(); untrackSize() }
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.wg.Add(2)
	go c.reflect(ctx)
	go c.bookmarkLoop(ctx)
	c.startConsistencyChecks(ctx)
	return c, nil
}

// Stop ends the reflector, terminates every watcher (their result channels
// close) and waits for all of the cacher's goroutines. Afterwards every
// request goes to the underlying store. Stop is idempotent; it does not stop
// the underlying store.
func (c *Cacher) Stop() {
	c.mu.Lock()
	c.stopped = true
	c.terminateAllLocked()
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
	c.untrack()
}

// countObjects counts the objects cached, or, until the cache is ready,
// asks the underlying store if it can count.
func (c *Cacher) countObjects(ctx context.Context) (int64, error) {
	c.mu.RLock()
	ready, n := c.ready && !c.stopped, len(c.objects.items)
	c.mu.RUnlock()
	if ready {
		return int64(n), nil
	}
	if counter, ok := c.store.(Counter); ok {
		return counter.Count(ctx, c.cfg.ResourcePrefix)
	}
	return 0, errors.New("watch cache not ready")
}

// estimateSize asks est for the estimated size of the cached objects; an
// error until the cache is ready (upstream reads the keys from its cache,
// waiting until it is fresh).
func (c *Cacher) estimateSize(est SizeEstimator) (int64, error) {
	c.mu.RLock()
	if !c.ready || c.stopped {
		c.mu.RUnlock()
		return 0, errors.New("watch cache not ready")
	}
	keys := make([]string, len(c.objects.items))
	for i, e := range c.objects.items {
		keys[i] = e.key
	}
	c.mu.RUnlock()
	n, ok := est.EstimateSize(keys)
	if !ok {
		return 0, errors.New("size estimation not enabled")
	}
	return n, nil
}

// stats count how requests were served (for tests and debugging).
type stats struct {
	listsCached, listsDelegated     atomic.Int64
	watchesCached, watchesDelegated atomic.Int64
	getsCached, getsDelegated       atomic.Int64
}

// Revision returns the revision the cache is at (0 before its first list).
func (c *Cacher) Revision() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rv
}

// Ready reports whether the cache has its initial state.
func (c *Cacher) Ready() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.ready && !c.stopped
}

// WaitReady waits until the cache has its initial state (or ctx ends, or
// the cacher is stopped). Requests do not need it (they go to the
// underlying store until then); a server may use it to start serving warm.
func (c *Cacher) WaitReady(ctx context.Context) error {
	err := c.awaitReady(ctx, 0, false)
	if err == nil || errors.Is(err, errCacheStopped) {
		return err
	}
	return fmt.Errorf("wait for watch cache of %q: %w", c.cfg.ResourcePrefix, err)
}

// Create implements [storage.Interface]; it writes to the underlying store.
func (c *Cacher) Create(ctx context.Context, key string, obj, out runtime.Object) error {
	return c.store.Create(ctx, key, obj, out)
}

// Delete implements [storage.Interface]; it writes to the underlying store.
func (c *Cacher) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion storage.ValidateObjectFunc, cachedExistingObject runtime.Object) error {
	return c.store.Delete(ctx, key, out, preconditions, validateDeletion, cachedExistingObject)
}

// GuaranteedUpdate implements [storage.Interface]; it writes to the
// underlying store. As upstream's cacher, the caller's cachedExistingObject
// is replaced by the cache's object when the cache holds the key: the
// store's first try starts from it instead of reading the key, and a stale
// guess costs what a conflict does (the store retries with the object its
// failed write read back). Without a cached object the caller's guess, if
// any, is passed on.
func (c *Cacher) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExistingObject runtime.Object) error {
	if obj := c.cachedObject(key); obj != nil {
		// Shared, not copied: the stores copy a guess before using it.
		cachedExistingObject = obj
	}
	return c.store.GuaranteedUpdate(ctx, key, destination, ignoreNotFound, preconditions, tryUpdate, cachedExistingObject)
}

// cachedObject is the cache's (shared, immutable) object at key, or nil if
// the cache does not hold it or is not ready.
func (c *Cacher) cachedObject(key string) runtime.Object {
	if !c.covers(key, false) {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.ready || c.stopped {
		return nil
	}
	if e := c.objects.get(key); e != nil {
		return e.object()
	}
	return nil
}

// CurrentRevision implements [storage.Interface]: the underlying store's.
func (c *Cacher) CurrentRevision(ctx context.Context) (uint64, error) {
	return c.store.CurrentRevision(ctx)
}

// Get implements [storage.Interface]. Resource version "0", or "N" once the
// cache has reached N, is answered from memory (a deep copy); "" too, once
// the cache has caught up with a revision of the store read after the Get
// arrived (see getConsistent); the rest by the underlying store.
func (c *Cacher) Get(ctx context.Context, key string, opts storage.GetOptions, objPtr runtime.Object) error {
	_, err := c.get(ctx, key, opts, objPtr, nil)
	return err
}

var _ storage.ItemGetter = (*Cacher)(nil)

// GetItem implements [storage.ItemGetter]: the object is made (with
// newObj) only when the read does not hand the entry to the context's
// Item.
func (c *Cacher) GetItem(ctx context.Context, key string, opts storage.GetOptions, newObj func() runtime.Object) (runtime.Object, error) {
	return c.get(ctx, key, opts, nil, newObj)
}

// get serves Get and GetItem: objPtr is the object to fill, or nil to
// make one with newObj when one is needed (it is returned; nil when the
// context's Item took the entry).
func (c *Cacher) get(ctx context.Context, key string, opts storage.GetOptions, objPtr runtime.Object, newObj func() runtime.Object) (runtime.Object, error) {
	dst := func() runtime.Object {
		if objPtr == nil {
			objPtr = newObj()
		}
		return objPtr
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("get %q: %w", key, err)
	}
	rv, err := storage.ParseRequestResourceVersion(key, opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	if !c.covers(key, false) {
		return c.getThrough(ctx, key, opts, dst())
	}
	if opts.ResourceVersion == "" {
		var ok bool
		if rv, ok, err = c.getConsistent(ctx, key); err != nil {
			return nil, err
		} else if !ok {
			return c.getThrough(ctx, key, opts, dst())
		}
	}
	c.mu.RLock()
	servable := c.ready && !c.stopped && c.rv >= rv
	var e *entry
	if servable {
		e = c.objects.get(key)
	}
	c.mu.RUnlock()
	if !servable {
		return c.getThrough(ctx, key, opts, dst())
	}
	c.stats.getsCached.Add(1)
	if e == nil {
		if opts.IgnoreNotFound {
			obj := dst()
			return obj, runtime.SetZeroValue(obj)
		}
		return nil, storage.NewError(storage.ErrCodeKeyNotFound, key, 0, "")
	}
	if sink := cacheable.ItemWanted(ctx); sink != nil {
		// The reader (the GET handler) writes the entry's kept encoding
		// (encoded once per entry and encoder, as lists' items are); objPtr
		// is left as it is.
		sink.Set(e.Encodings())
		return objPtr, nil
	}
	obj := dst()
	return obj, copyInto(key, e.object(), obj)
}

func (c *Cacher) getThrough(ctx context.Context, key string, opts storage.GetOptions, objPtr runtime.Object) (runtime.Object, error) {
	c.stats.getsDelegated.Add(1)
	return objPtr, c.store.Get(ctx, key, opts, objPtr)
}

// copyInto sets *dst to a deep copy of src (of the same type).
func copyInto(key string, src, dst runtime.Object) error {
	cp := src.DeepCopyObject()
	dv, sv := reflect.ValueOf(dst), reflect.ValueOf(cp)
	if dv.Kind() != reflect.Pointer || dv.IsNil() || dv.Type() != sv.Type() {
		return fmt.Errorf("get %q: cannot store a %T into a %T", key, src, dst)
	}
	dv.Elem().Set(sv.Elem())
	return nil
}

// covers reports whether the cache holds key (or, recursive, everything
// under key).
func (c *Cacher) covers(key string, recursive bool) bool {
	if recursive {
		k := strings.TrimSuffix(key, "/")
		return k == c.cfg.ResourcePrefix || strings.HasPrefix(k+"/", c.prefix)
	}
	return strings.HasPrefix(key, c.prefix) && len(key) > len(c.prefix)
}

// scopePrefix is the key prefix of a recursive read or watch of key.
func scopePrefix(key string) string {
	if strings.HasSuffix(key, "/") {
		return key
	}
	return key + "/"
}

// waitReady waits up to ReadyWait for the cache's initial state; false if it
// is not there (or the cacher is stopped, or its last list failed: see
// initFailure): the caller uses the underlying store.
func (c *Cacher) waitReady(ctx context.Context) bool {
	return c.awaitReady(ctx, c.cfg.ReadyWait, true) == nil
}

var (
	errCacheStopped  = errors.New("watch cache stopped")
	errReadyWaitOver = errors.New("watch cache not ready in time")
	errInitFailed    = errors.New("watch cache initialization failed")
)

// awaitReady is the one wait for the cache's initial state, of
// [Cacher.WaitReady] and [Cacher.waitReady]: nil once the cache has it,
// errCacheStopped if the cacher is stopped, ctx's error if ctx ends first,
// errReadyWaitOver after limit (limit <= 0: no limit), with failFast
// errInitFailed as soon as the cache's list has failed. A ready cache
// answers at once, with no timer.
func (c *Cacher) awaitReady(ctx context.Context, limit time.Duration, failFast bool) error {
	var timeout <-chan time.Time
	for {
		c.mu.RLock()
		ready, stopped, ch := c.ready, c.stopped, c.changed
		c.mu.RUnlock()
		switch {
		case stopped:
			return errCacheStopped
		case ready:
			return nil
		case failFast && c.initFailure() != nil:
			return errInitFailed
		}
		if timeout == nil && limit > 0 {
			timer := time.NewTimer(limit)
			defer timer.Stop()
			timeout = timer.C
		}
		select {
		case <-ch:
		case <-timeout:
			return errReadyWaitOver
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// waitFresh waits until the cache is ready and at revision need or newer.
// known says the underlying store is known to have reached need; otherwise
// it is asked, and a revision it does not have yet returns false at once
// (the caller lets the underlying store wait for it or fail). The wait for
// the cache to catch up is bounded by ConsistentReadWait; false means the
// cache is not there and the caller uses the underlying store.
func (c *Cacher) waitFresh(ctx context.Context, need uint64, known bool) (bool, error) {
	if need > 0 && c.metrics != nil {
		start := time.Now()
		defer func() { c.metrics.ReadWait(time.Since(start)) }()
	}
	if !c.waitReady(ctx) {
		return false, nil
	}
	if c.Revision() >= need {
		return true, nil
	}
	if !known {
		cur, err := c.store.CurrentRevision(ctx)
		if err != nil {
			return false, err
		}
		if cur < need {
			return false, nil
		}
	}
	deadline := time.NewTimer(c.cfg.ConsistentReadWait)
	defer deadline.Stop()
	var tick <-chan time.Time
	if c.progress != nil {
		t := time.NewTicker(progressRequestInterval)
		defer t.Stop()
		tick = t.C
		c.requestProgress(ctx)
	}
	for {
		c.mu.RLock()
		rv, ok, ch := c.rv, c.ready && !c.stopped, c.changed
		c.mu.RUnlock()
		if !ok {
			return false, nil
		}
		if rv >= need {
			return true, nil
		}
		select {
		case <-ch:
		case <-tick:
			c.requestProgress(ctx)
		case <-deadline.C:
			c.cfg.Logger.Debug("watch cache did not catch up in time, reading through",
				"prefix", c.cfg.ResourcePrefix, "revision", rv, "want", need)
			return false, nil
		case <-ctx.Done():
			return false, fmt.Errorf("wait for revision %d: %w", need, ctx.Err())
		}
	}
}

// progressRequestInterval spaces progress requests while a reader waits
// for the cache to catch up (across all waiters, at most two per
// interval). A wait's first request goes out at once; the interval is how
// long a reader waits when that one is lost. etcd answers a progress
// request only when every watcher of its stream has synced and otherwise
// drops it, which is the rule at a start: the informers' first watch-lists
// of an embedded-etcd start waited a whole interval for their initial-events
// bookmark in about half the starts (start → ready 75 or 170 ms with
// kube-apiserver's 100 ms; 80–95 ms every time with 10 ms, session 16).
// A request is one message on the watch stream.
const progressRequestInterval = 10 * time.Millisecond

// requestProgress asks the underlying store for a progress notification,
// at most once per progressRequestInterval/2 for the whole cacher.
func (c *Cacher) requestProgress(ctx context.Context) {
	c.progressMu.Lock()
	now := time.Now()
	if now.Sub(c.lastProgress) < progressRequestInterval/2 {
		c.progressMu.Unlock()
		return
	}
	c.lastProgress = now
	c.progressMu.Unlock()
	if err := c.progress.RequestWatchProgress(ctx); err != nil {
		c.cfg.Logger.Debug("watch cache progress request failed", "prefix", c.cfg.ResourcePrefix, "err", err)
	}
}

// notifyLocked wakes everything waiting for a change of rv or readiness.
func (c *Cacher) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// initFailure returns kube-apiserver's answer to a list or watch its watch
// cache would serve while the cache is not ready and its last attempt to
// list failed (nil otherwise): 429 TooManyRequests "storage is
// (re)initializing: <why>" with Retry-After growing with the time the cache
// has been unready (k8s.io/apiserver storage/cacher: ready.check,
// calculateRetryAfterForUnreadyCache), so clients back off while the cause
// lasts (for example a custom resource's failing conversion webhook).
//
// Unlike upstream, a cache whose list has not failed (still starting, or
// relisting after a compaction) is waited for (Config.ReadyWait) and then
// read through: upstream answers 429 there too, which client-go retries.
func (c *Cacher) initFailure() error {
	if !c.initFailed.Load() {
		return nil
	}
	c.mu.RLock()
	ready, stopped, err, since := c.ready, c.stopped, c.initErr, c.unreadySince
	c.mu.RUnlock()
	if ready || stopped || err == nil {
		return nil
	}
	return apierrors.NewTooManyRequests("storage is (re)initializing: "+err.Error(), retryAfterUnready(time.Since(since)))
}

// retryAfterUnready is upstream's Retry-After, in seconds, for a cache
// unready for downtime: e^(0.06·seconds), between 1 and 30.
func retryAfterUnready(downtime time.Duration) int {
	return int(math.Min(30, math.Max(1, math.Exp(0.06*downtime.Seconds()))))
}

// setInitErr records why the cache's list failed; a ready cache (which
// keeps serving) ignores it.
func (c *Cacher) setInitErr(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ready || c.stopped {
		return
	}
	c.initErr = err
	c.initFailed.Store(err != nil)
	c.notifyLocked()
}

// listFailed is the error of the reflector's list of the underlying store.
// Its text is that of kube-apiserver's reflector, which the 429 of an
// unready cache quotes (the cacher's reflector has no expected type).
type listFailed struct{ err error }

func (e *listFailed) Error() string { return "failed to list <unspecified>: " + e.err.Error() }
func (e *listFailed) Unwrap() error { return e.err }

// DeleteCorrupt implements [storage.CorruptDeleter] when the underlying
// store does (the cache learns of the deletion through its watch); else it
// answers that the store cannot.
func (c *Cacher) DeleteCorrupt(ctx context.Context, key string, dryRun bool) error {
	cd, ok := c.store.(storage.CorruptDeleter)
	if !ok {
		return storage.ErrNoCorruptDeleter
	}
	return cd.DeleteCorrupt(ctx, key, dryRun)
}
