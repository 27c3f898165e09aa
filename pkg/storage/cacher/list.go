package cacher

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
)

// listMode is how a list is served.
type listMode int

const (
	listThrough    listMode = iota // by the underlying store
	listConsistent                 // resourceVersion "": once caught up
	listNotOlder                   // "0" or "N" NotOlderThan: a state at least as new
	listExact                      // exactly revision N: from a snapshot
	listContinue                   // a continue token: from a snapshot
)

// GetList implements [storage.Interface]. See the package doc for what is
// served from memory; the answers are those of the underlying store:
// the same items, resourceVersion, continue tokens (in kube's watch cache
// form unless Config.StoreContinueTokens; interchangeable with the
// store's) and remainingItemCount.
func (c *Cacher) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("list %q: %w", key, err)
	}
	rv, err := storage.ValidateListOptions(key, opts)
	if err != nil {
		return err
	}
	prefix := scopePrefix(key)
	from := prefix // the first key of the page
	mode := c.listMode(key, opts, rv)
	if mode != listThrough {
		if err := c.unreadyList(opts); err != nil {
			return err
		}
	}
	switch mode {
	case listThrough:
		return c.listThrough(ctx, key, opts, listObj)
	case listExact:
		return c.listAt(ctx, key, opts, listObj, rv, prefix)
	case listContinue:
		k, crv, err := storage.DecodeContinue(opts.Predicate.Continue, prefix)
		if err != nil {
			// The store answers malformed tokens (400).
			return c.listThrough(ctx, key, opts, listObj)
		}
		if crv > 0 {
			return c.listAt(ctx, key, opts, listObj, uint64(crv), k)
		}
		if c.exactReadsOff() {
			// After a failed consistency check upstream sends every
			// continue token to etcd, not counted as a consistent read.
			return c.listThrough(ctx, key, opts, listObj)
		}
		// A token of the latest revision (-1: the one a 410 hands
		// out) is a consistent read from its key on, as kube's watch
		// cache serves it.
		from, mode = k, listConsistent
	}

	// A consistent read counts whether it succeeded and whether it fell
	// back to the underlying store.
	consistent := mode == listConsistent
	need, known := rv, false
	if consistent {
		cur, err := c.store.CurrentRevision(ctx)
		if err != nil {
			c.metrics.ConsistentRead(false, false)
			return fmt.Errorf("list %q: %w", key, err)
		}
		need, known = cur, true
	}
	ok, err := c.waitFresh(ctx, need, known)
	if err != nil {
		if consistent {
			c.metrics.ConsistentRead(false, false)
		}
		return fmt.Errorf("list %q: %w", key, err)
	}
	if !ok {
		if err := c.unreadyList(opts); err != nil {
			if consistent {
				c.metrics.ConsistentRead(false, false)
			}
			return err
		}
		err := c.listThrough(ctx, key, opts, listObj)
		if consistent {
			c.metrics.ConsistentRead(err == nil, true)
		}
		return err
	}
	if consistent {
		c.metrics.ConsistentRead(true, false)
	}
	limit := opts.Predicate.Limit
	if opts.ResourceVersion == "0" || !opts.Recursive {
		limit = 0 // as kube's watch cache: "0" returns everything
	}

	w := c.matcher(key, opts)
	var p page
	var listRV uint64
	if limit > 0 {
		// A page: later pages are read from a snapshot of this state.
		c.mu.Lock()
		listRV = c.rv
		p = readPage(c.objects.items, prefix, from, limit, w.matches)
		if p.hasMore {
			c.recordSnapshotLocked()
		}
		c.mu.Unlock()
	} else {
		c.mu.RLock()
		listRV = c.rv
		p = c.readLocked(c.objects.items, key, prefix, from, opts.Recursive, 0, w.matches)
		c.mu.RUnlock()
	}
	return c.finishList(ctx, key, opts, listObj, p, listRV, prefix)
}

// listAt serves a list at exactly revision rev, from key from on, from a
// snapshot of the cache's state at rev if there is one (or the current
// state is rev's), else by the underlying store (which knows whether rev is
// compacted).
func (c *Cacher) listAt(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object, rev uint64, from string) error {
	prefix := scopePrefix(key)
	w := c.matcher(key, opts)
	c.mu.Lock()
	items, current, ok := c.stateAtLocked(rev)
	var p page
	if ok {
		p = c.readLocked(items, key, prefix, from, opts.Recursive, opts.Predicate.Limit, w.matches)
		if current && p.hasMore {
			c.recordSnapshotLocked() // for the next pages
		}
	}
	c.mu.Unlock()
	if !ok {
		return c.listThrough(ctx, key, opts, listObj)
	}
	return c.finishList(ctx, key, opts, listObj, p, rev, prefix)
}

// stateAtLocked returns the objects as they were at rev: a recorded
// snapshot's, or the current ones (current) if they are rev's; ok false if
// the cache cannot tell.
func (c *Cacher) stateAtLocked(rev uint64) (items []*entry, current, ok bool) {
	if !c.ready || c.stopped || rev < c.compacted {
		return nil, false, false
	}
	c.expireSnapshotsLocked()
	if s := c.snaps.find(rev); s != nil {
		return s.items, false, c.exactServableLocked(s.from)
	}
	if rev < c.stateSince || rev > c.rv {
		return nil, false, false
	}
	return c.objects.items, true, c.exactServableLocked(c.stateSince)
}

// recordSnapshotLocked records the current state as a snapshot, for the
// next pages of a list that read it.
func (c *Cacher) recordSnapshotLocked() {
	if c.consistency.inconsistent {
		return // none until a consistency check succeeds
	}
	c.expireSnapshotsLocked()
	c.snaps.add(c.objects.snapshot(), c.stateSince, c.rv, c.cfg.Clock.Now(), c.cfg.MaxSnapshots)
}

// expireSnapshotsLocked drops the snapshots older than SnapshotTTL.
func (c *Cacher) expireSnapshotsLocked() {
	c.snaps.expire(c.cfg.Clock.Now().Add(-c.cfg.SnapshotTTL), c.compacted)
}

// readLocked reads a page (recursive) or the one object at key from items.
func (c *Cacher) readLocked(items []*entry, key, prefix, from string, recursive bool, limit int64, match func(*entry) bool) page {
	if recursive {
		return readPage(items, prefix, from, limit, match)
	}
	var p page
	if i, ok := slices.BinarySearchFunc(items, key, cmpKey); ok {
		p.fetched = 1
		if match(items[i]) {
			// A slice of its own: items may be the cache's live state,
			// written in place once the lock is released.
			p.matched = []*entry{items[i]}
		}
	}
	return p
}

// matcher is a watcher-shaped predicate matcher of a list's options.
func (c *Cacher) matcher(key string, opts storage.ListOptions) *cacheWatcher {
	return &cacheWatcher{key: key, prefix: scopePrefix(key), recursive: opts.Recursive, pred: opts.Predicate, all: opts.Predicate.Empty()}
}

// finishList fills listObj with deep copies of the page's objects (or,
// when the reader asks for them with cacheable.WithItems, hands it the
// entries' shared objects, uncopied, and leaves listObj's items empty) and
// sets its resourceVersion, continue token and remaining item count as the
// stores do.
func (c *Cacher) finishList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object, p page, rev uint64, prefix string) error {
	c.stats.listsCached.Add(1)
	c.metrics.List(p.fetched, len(p.matched))
	var items []runtime.Object
	if sink := cacheable.ItemsWanted(ctx); sink != nil {
		shared := make([]*cacheable.Object, len(p.matched))
		for i, e := range p.matched {
			shared[i] = e.Encodings()
		}
		sink.Set(shared)
	} else {
		items = make([]runtime.Object, len(p.matched))
		for i, e := range p.matched {
			items[i] = e.object().DeepCopyObject()
		}
	}
	if err := meta.SetList(listObj, items); err != nil {
		return fmt.Errorf("list %q: %w", key, err)
	}
	var cont string
	var remaining *int64
	if p.hasMore {
		var err error
		if cont, err = storage.EncodeContinue(p.lastKey+"\x00", storage.ContinuePrefix(key, !c.cfg.StoreContinueTokens), int64(rev)); err != nil {
			return fmt.Errorf("list %q: %w", key, err)
		}
		if opts.Predicate.Empty() {
			n := p.remaining
			remaining = &n
		}
	}
	if err := storage.SetListResourceVersion(listObj, rev, cont, remaining); err != nil {
		return fmt.Errorf("list %q: %w", key, err)
	}
	return nil
}

func (c *Cacher) listThrough(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	c.stats.listsDelegated.Add(1)
	return c.store.GetList(ctx, key, opts, listObj)
}

// unreadyList returns the 429 of initFailure for a list the cache would
// serve, except for those kube-apiserver reads from etcd while its cache is
// not ready (a page, limit > 0, without label or field selector:
// k8s.io/apiserver storage/cacher shouldDelegateListOnNotReadyCache), for
// which it returns nil: they are read through.
func (c *Cacher) unreadyList(opts storage.ListOptions) error {
	if opts.Predicate.Limit > 0 && opts.Predicate.Empty() {
		return nil
	}
	return c.initFailure()
}

// listMode tells how a list with valid options (rv parsed) is served.
// Consistent and not-older-than lists wait for the cache to be fresh
// enough; exact ones (match Exact, or the legacy paginated list at N) and
// continue tokens are read from snapshots.
func (c *Cacher) listMode(key string, opts storage.ListOptions, rv uint64) listMode {
	if !c.covers(key, opts.Recursive) {
		return listThrough
	}
	if opts.Recursive && opts.Predicate.Continue != "" {
		return listContinue
	}
	switch opts.ResourceVersionMatch {
	case metav1.ResourceVersionMatchNotOlderThan:
		if opts.ResourceVersion == "" {
			return listThrough // not a valid request; the store's answer
		}
		return listNotOlder
	case metav1.ResourceVersionMatchExact:
		if rv == 0 {
			return listThrough // not a valid request; the store's answer
		}
		return listExact
	}
	switch {
	case opts.ResourceVersion == "":
		return listConsistent
	case rv > 0 && opts.Recursive && opts.Predicate.Limit > 0:
		return listExact // legacy: a paginated list at N is exact
	}
	return listNotOlder
}

// errorEvent is the ERROR event that ends a watch after err.
func errorEvent(err error) watch.Event {
	st := apierrors.NewInternalError(err).Status()
	return watch.Event{Type: watch.Error, Object: &st}
}
