package memory

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// Backend is a multi-version key-value store with one global revision, shared
// by the [Store]s of several resources. It is safe for concurrent use. Close
// it when done: it owns a background goroutine and every watch goroutine.
type Backend struct {
	cfg BackendConfig

	mu        sync.RWMutex
	rev       uint64              // current revision
	compacted uint64              // states at revisions < compacted are gone
	keys      keyIndex            // every key that has history
	hist      map[string]*history // by key
	events    []*event            // one per revision, ascending, from compacted on
	watchers  map[*watcher]struct{}
	revCh     chan struct{} // closed and replaced on every write
	closed    bool

	stop      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup // background loop and watch goroutines
}

// version is one state of a key; val nil is a deletion (tombstone).
type version struct {
	rev uint64
	val *blob
}

type history struct {
	// key is the key, shared by the key's events (one string per key,
	// not one per write: the history holds every write's event until the
	// next compaction).
	key      string
	versions []version // ascending by rev

	// anchor is the value the key's superseded values are deltas
	// against (see blob), kept whole; nil until a value is superseded.
	anchor *blob

	// listed is the key's state decoded once for lists (see listed.go):
	// cleared by every write of the key.
	listed atomic.Pointer[listedState]
}

// eventKind is what an event on a watcher's queue is.
type eventKind int

const (
	eventPut eventKind = iota
	eventDelete
	eventBookmark
)

// event is one change (one revision) or a bookmark. Events are immutable once
// published.
type event struct {
	kind  eventKind
	rev   uint64
	key   string
	value *blob // new value (put)
	prev  *blob // previous value, nil if the key did not exist

	// decoded are the event's objects shared by the watchers of the
	// Store it belongs to (see shared.go), built on first need.
	decoded decodedEvent
}

// kv is one key's state at a revision, as returned by range reads.
type kv struct {
	key  string
	rev  uint64 // modification revision
	data []byte
	h    *history // the key's history (nil in states not read from it)
}

// NewBackend returns an empty Backend (revision 0) and starts its background
// loop (bookmarks, periodic compaction).
func NewBackend(cfg BackendConfig) *Backend {
	b := &Backend{
		cfg:      cfg.withDefaults(),
		hist:     make(map[string]*history),
		watchers: make(map[*watcher]struct{}),
		revCh:    make(chan struct{}),
		stop:     make(chan struct{}),
	}
	b.wg.Add(1)
	go b.loop()
	return b
}

// Close terminates every watch (their result channels close), stops the
// background loop and waits for all of the backend's goroutines. Later
// operations fail with ErrCodeUnreachable. Close is idempotent.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() {
		b.mu.Lock()
		b.closed = true
		ws := make([]*watcher, 0, len(b.watchers))
		for w := range b.watchers {
			ws = append(ws, w)
		}
		b.mu.Unlock()
		close(b.stop)
		for _, w := range ws {
			w.Stop()
		}
		b.wg.Wait()
	})
	return nil
}

// Revision returns the current revision.
func (b *Backend) Revision() uint64 {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.rev
}

// Changed returns a channel that is closed once the backend's revision is
// above rev (already closed if it is, or if the backend is closed): a
// reader of Read's state waits on it for the next write instead of
// polling. A backend closed after the call does not close it.
func (b *Backend) Changed(rev uint64) <-chan struct{} {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.rev > rev || b.closed {
		return closedChan
	}
	return b.revCh
}

var closedChan = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// CompactedRevision returns the revision history was last compacted at (0 if
// never): states at older revisions are gone.
func (b *Backend) CompactedRevision() uint64 {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.compacted
}

// Compact drops history before rev, as etcd's Compact: the state at rev and
// later stays readable, events at rev and later stay watchable. It fails with
// ErrCodeExpired if rev is not newer than the last compaction and with
// ErrCodeTooLargeResourceVersion if rev is newer than the current revision.
func (b *Backend) Compact(ctx context.Context, rev uint64) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("compact at %d: %w", rev, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return errClosed("")
	}
	if rev <= b.compacted {
		return storage.NewError(storage.ErrCodeExpired, "", int64(rev),
			fmt.Sprintf("required revision has been compacted (compacted at %d)", b.compacted))
	}
	if rev > b.rev {
		return storage.NewError(storage.ErrCodeTooLargeResourceVersion, "", int64(rev),
			fmt.Sprintf("required revision is a future revision (current %d)", b.rev))
	}
	b.compactLocked(rev)
	return nil
}

func (b *Backend) compactLocked(rev uint64) {
	b.keys.retain(func(k string) bool {
		h := b.hist[k]
		// i: index of the newest version at or before rev.
		i := sort.Search(len(h.versions), func(j int) bool { return h.versions[j].rev > rev }) - 1
		if i >= 0 {
			if h.versions[i].val == nil {
				i++ // a deletion at or before rev: drop it and everything older
			}
			h.versions = slices.Clone(h.versions[i:])
			h.dropAnchorIfUnused()
		}
		if len(h.versions) == 0 {
			delete(b.hist, k)
			return false
		}
		return true
	})
	// Events are one per revision, so the first one to keep is at index
	// rev - first.rev. A fresh slice: watchers may hold the old one.
	if len(b.events) > 0 {
		first := b.events[0].rev
		if rev > first {
			n := min(int(rev-first), len(b.events))
			b.events = slices.Clone(b.events[n:])
		}
	}
	b.compacted = rev
	b.cfg.Logger.Debug("memory storage compacted", "revision", rev)
}

// loop sends periodic bookmarks and compacts periodically.
func (b *Backend) loop() {
	defer b.wg.Done()
	bookmarks := time.NewTicker(b.cfg.BookmarkInterval)
	defer bookmarks.Stop()
	var compactC <-chan time.Time
	if b.cfg.CompactionInterval > 0 {
		t := time.NewTicker(b.cfg.CompactionInterval)
		defer t.Stop()
		compactC = t.C
	}
	var lastTickRev uint64
	for {
		select {
		case <-b.stop:
			return
		case <-bookmarks.C:
			b.sendBookmarks()
		case <-compactC:
			b.mu.Lock()
			if lastTickRev > b.compacted {
				b.compactLocked(lastTickRev)
			}
			lastTickRev = b.rev
			b.mu.Unlock()
		}
	}
}

// RequestWatchProgress implements the cacher's ProgressRequester: every
// watch of the store's backend that asked for progress notifications
// (ProgressNotify and Predicate.AllowWatchBookmarks) gets a BOOKMARK at the
// current revision now, after every event up to it, instead of at the next
// BookmarkInterval. A watcher whose buffer is full skips it.
func (s *Store) RequestWatchProgress(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("request watch progress: %w", err)
	}
	b := s.b
	b.mu.RLock()
	closed := b.closed
	b.mu.RUnlock()
	if closed {
		return errClosed("")
	}
	b.sendBookmarks()
	return nil
}

func (b *Backend) sendBookmarks() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rev == 0 {
		return
	}
	ev := &event{kind: eventBookmark, rev: b.rev}
	for w := range b.watchers {
		if !w.progress {
			continue
		}
		// A busy watcher skips a bookmark; the next one will do.
		w.in.push(ev)
	}
}

// sendBookmarkTo queues one bookmark at the current revision for w, after
// the events already queued for it.
func (b *Backend) sendBookmarkTo(w *watcher) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rev == 0 {
		return
	}
	if _, ok := b.watchers[w]; !ok {
		return
	}
	w.in.push(&event{kind: eventBookmark, rev: b.rev}) // a busy watcher skips it
}

func errClosed(key string) error {
	return storage.NewError(storage.ErrCodeUnreachable, key, 0, "memory storage backend is closed")
}

// latestLocked returns the current state of key.
func (b *Backend) latestLocked(key string) (kv, bool) {
	h := b.hist[key]
	if h == nil {
		return kv{}, false
	}
	v := h.versions[len(h.versions)-1]
	if v.val == nil {
		return kv{}, false
	}
	return kv{key: key, rev: v.rev, data: v.val.bytes(), h: h}, true
}

// atLocked returns the state of key at revision rev (rev >= compacted).
func (b *Backend) atLocked(key string, rev uint64) (kv, bool) {
	h := b.hist[key]
	if h == nil {
		return kv{}, false
	}
	i := sort.Search(len(h.versions), func(j int) bool { return h.versions[j].rev > rev }) - 1
	if i < 0 || h.versions[i].val == nil {
		return kv{}, false
	}
	v := h.versions[i]
	return kv{key: key, rev: v.rev, data: v.val.bytes(), h: h}, true
}

// rangeLocked returns the states at rev of keys in [from, end), in key order.
func (b *Backend) rangeLocked(from, end string, rev uint64) []kv {
	out, _ := b.rangeLimitLocked(from, end, rev, -1)
	return out
}

// rangeLimitLocked is rangeLocked returning at most limit states (limit < 0:
// all) and the number of states after them (counted, not returned).
func (b *Backend) rangeLimitLocked(from, end string, rev uint64, limit int) (out []kv, more int64) {
	if limit >= 0 {
		out = make([]kv, 0, min(limit, b.keys.len()))
	}
	b.keys.ascend(from, func(k string) bool {
		if k >= end {
			return false
		}
		if s, ok := b.atLocked(k, rev); ok {
			if limit < 0 || len(out) < limit {
				out = append(out, s)
			} else {
				more++
			}
		}
		return true
	})
	return out, more
}

// get returns the current state of key.
func (b *Backend) get(key string) (kv, bool, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return kv{}, false, errClosed(key)
	}
	s, ok := b.latestLocked(key)
	return s, ok, nil
}

// compareAndPut writes data at key if the key's modification revision is
// expect (0: the key must not exist). It returns the new revision, or
// ok=false and the key's current state (cur, exists) on a mismatch.
func (b *Backend) compareAndPut(key string, expect uint64, data []byte) (rev uint64, cur kv, exists, ok bool, err error) {
	rev, _, cur, exists, ok, err = b.compareAndPutHeld(key, expect, data, nil)
	return rev, cur, exists, ok, err
}

// compareAndPutHeld is compareAndPut that, with held non-nil, queues the
// write's event for the watchers that want it without waking them: it
// returns the event, and the caller calls held.wake() once it has seeded
// the event's decoded object (see Store.seed), which the woken watchers
// then copy instead of decoding the value again.
func (b *Backend) compareAndPutHeld(key string, expect uint64, data []byte, held *heldWatchers) (rev uint64, ev *event, cur kv, exists, ok bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, nil, kv{}, false, false, errClosed(key)
	}
	cur, exists = b.latestLocked(key)
	if (exists && cur.rev != expect) || (!exists && expect != 0) {
		return 0, nil, cur, exists, false, nil
	}
	ev = &event{kind: eventPut, key: key, value: newBlob(data)}
	if held != nil {
		rev = b.writeBatchLocked(ev, &writeBatch{held: held})
	} else {
		rev = b.writeLocked(ev)
	}
	return rev, ev, kv{}, false, true, nil
}

// heldWatchers are the watchers one write's event was queued for, to be
// woken by the writer (wake) once it has seeded the event.
type heldWatchers struct {
	ws  []*watcher
	buf [4]*watcher // ws's first array: most writes have few watchers
}

// include reports whether a held watcher watches through s (the others,
// another served version of the same custom resources, decode with
// another Store and cannot take s's decoding).
func (h *heldWatchers) include(s *Store) bool {
	for _, w := range h.ws {
		if w.s == s {
			return true
		}
	}
	return false
}

// wake wakes the held watchers.
func (h *heldWatchers) wake() {
	for _, w := range h.ws {
		w.in.signal()
	}
	h.ws = nil
}

// compareAndDelete deletes key if its modification revision is expect. It
// returns the revision of the deletion, or ok=false and the key's current
// state on a mismatch (exists=false if the key is gone).
func (b *Backend) compareAndDelete(key string, expect uint64) (rev uint64, cur kv, exists, ok bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, kv{}, false, false, errClosed(key)
	}
	cur, exists = b.latestLocked(key)
	if !exists || cur.rev != expect {
		return 0, cur, exists, false, nil
	}
	rev = b.writeLocked(&event{kind: eventDelete, key: key})
	return rev, kv{}, false, true, nil
}

// writeLocked applies ev as the next revision, publishes it to watchers and
// returns the revision.
func (b *Backend) writeLocked(ev *event) uint64 {
	return b.writeBatchLocked(ev, nil)
}

// writeBatch is what the writes of one batch (Apply) share: the watchers,
// collected once (a batch of n writes otherwise walks the watcher map n
// times), and which of them an event was queued for. They are woken, and
// revision waiters released, once, when the whole batch is written: the
// backend lock is held throughout, so nobody sees a revision in between.
type writeBatch struct {
	watchers []*watcher // nil once cut off during the batch
	woken    []bool     // parallel to watchers
	wrote    bool
	// held, for a single write (compareAndPutHeld): the watchers are
	// b.watchers, those the event is queued for are added to held
	// (woken by the writer later); revision waiters are released at once.
	held *heldWatchers
}

func (b *Backend) newWriteBatch() *writeBatch {
	ws := make([]*watcher, 0, len(b.watchers))
	for w := range b.watchers {
		ws = append(ws, w)
	}
	return &writeBatch{watchers: ws, woken: make([]bool, len(ws))}
}

// finishLocked wakes the watchers the batch queued events for and, if it
// wrote anything, the revision waiters.
func (b *Backend) finishLocked(wb *writeBatch) {
	for i, w := range wb.watchers {
		if w != nil && wb.woken[i] {
			w.in.signal()
		}
	}
	if wb.wrote {
		close(b.revCh)
		b.revCh = make(chan struct{})
	}
}

// writeBatchLocked is writeLocked for one write of a batch (Apply): with
// wb non-nil, watchers the event is queued for are marked in wb instead of
// being woken, and the caller finishes the batch (finishLocked) once it is
// written. It sets the event's previous value to the key's current one.
func (b *Backend) writeBatchLocked(ev *event, wb *writeBatch) uint64 {
	b.rev++
	ev.rev = b.rev
	h := b.hist[ev.key]
	if h == nil {
		h = &history{key: ev.key}
		b.hist[ev.key] = h
		b.keys.insert(ev.key)
	}
	ev.key = h.key
	if n := len(h.versions); n > 0 {
		ev.prev = h.versions[n-1].val // nil after a deletion
		// The value before the previous one is superseded now, not the
		// previous one: that one is this event's prev, which every
		// watcher sending a deletion (and every selector watcher) reads
		// at delivery, and a delta would be rebuilt per watcher.
		if n > 1 {
			h.supersede(h.versions[n-2].val)
		}
	}
	h.versions = append(h.versions, version{rev: ev.rev, val: ev.value})
	h.listed.Store(nil) // the decoded state is no longer the key's
	b.events = append(b.events, ev)

	switch {
	case wb != nil && wb.held != nil:
		for w := range b.watchers {
			if !w.wants(ev.key) {
				continue
			}
			if w.in.pushQuiet(ev) {
				wb.held.ws = append(wb.held.ws, w)
			} else {
				b.cutOffLocked(w, ev.rev)
			}
		}
		close(b.revCh)
		b.revCh = make(chan struct{})
	case wb != nil:
		for i, w := range wb.watchers {
			if w == nil || !w.wants(ev.key) {
				continue
			}
			if w.in.pushQuiet(ev) {
				wb.woken[i] = true
				continue
			}
			wb.watchers[i] = nil
			b.cutOffLocked(w, ev.rev)
		}
		wb.wrote = true
	default:
		for w := range b.watchers {
			if w.wants(ev.key) && !w.in.push(ev) {
				b.cutOffLocked(w, ev.rev)
			}
		}
		close(b.revCh)
		b.revCh = make(chan struct{})
	}

	if win := b.cfg.HistoryWindow; win > 0 && b.rev-b.compacted > 2*win {
		b.compactLocked(b.rev - win)
	}
	return ev.rev
}

// cutOffLocked terminates a watcher whose queue is full: it is too far
// behind, and writers do not block. Its client re-watches from its last
// revision.
func (b *Backend) cutOffLocked(w *watcher, rev uint64) {
	delete(b.watchers, w)
	w.overflow()
	b.cfg.Logger.Warn("memory storage terminated a slow watcher",
		"key", w.key, "recursive", w.recursive, "buffer", w.in.limit, "revision", rev)
}

// waitForRevision waits up to FreshWait for the backend to reach rev. It
// returns ErrCodeTooLargeResourceVersion if it does not.
func (b *Backend) waitForRevision(ctx context.Context, key string, rev uint64) error {
	var timer *time.Timer
	for {
		b.mu.RLock()
		cur, ch, closed := b.rev, b.revCh, b.closed
		b.mu.RUnlock()
		if closed {
			return errClosed(key)
		}
		if cur >= rev {
			return nil
		}
		if timer == nil {
			timer = time.NewTimer(b.cfg.FreshWait)
			defer timer.Stop()
		}
		select {
		case <-ch:
		case <-timer.C:
			return tooLargeRV(key, rev, cur)
		case <-ctx.Done():
			return fmt.Errorf("wait for revision %d: %w", rev, ctx.Err())
		}
	}
}

func tooLargeRV(key string, rev, cur uint64) error {
	return storage.NewError(storage.ErrCodeTooLargeResourceVersion, key, int64(rev),
		fmt.Sprintf("Too large resource version: %d, current: %d", rev, cur))
}

// prefixEnd returns the smallest string greater than every string with
// prefix p (p must be non-empty and not all 0xff).
func prefixEnd(p string) string {
	bs := []byte(p)
	for i := len(bs) - 1; i >= 0; i-- {
		if bs[i] < 0xff {
			bs[i]++
			return string(bs[:i+1])
		}
	}
	return strings.Repeat("\xff", len(p)+1)
}
