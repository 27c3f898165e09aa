package cacher

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
)

// entry is one object as the cache holds it, with the attributes predicates
// match against. Entries are immutable once built (their object is
// shared), except that a superseded state's body changes once, atomically,
// from decoded to packed (see Cacher.pack).
type entry struct {
	key    string
	rv     uint64
	labels labels.Set
	fields fields.Set

	// body is the object: decoded, or, once the entry is a superseded
	// state deep enough in the event window, packed (see Cacher.pack).
	// Read it with object().
	body atomic.Pointer[entryBody]

	// encodings is the object wrapped for encode-once reads (see Encodings),
	// made on the first read that asks for it.
	encodings atomic.Pointer[cacheable.Object]
}

// newCacheEntry returns the entry of obj, decoded.
func newCacheEntry(key string, obj runtime.Object, rv uint64, ls labels.Set, fs fields.Set) *entry {
	e := &entry{key: key, rv: rv, labels: ls, fields: fs}
	e.body.Store(&entryBody{obj: obj})
	return e
}

// entryBody is an entry's object: obj, or packed.
type entryBody struct {
	obj    runtime.Object
	packed *packedObj
}

// object returns the entry's object (unpacked if it is packed; see
// packedObj.object). Shared: callers must not modify it.
func (e *entry) object() runtime.Object {
	b := e.body.Load()
	if b.packed != nil {
		return b.packed.object(e.key)
	}
	return b.obj
}

// Encodings returns the entry's object as a shared cacheable.Object whose
// serializations (one per encoder: JSON, protobuf, a list item's form)
// are computed once and kept with the entry for as long as the entry is
// the cache's state (a write replaces the entry, and its encodings with
// it). List reads hand these to the API handler ([cacheable.WithItems]);
// a GET served from the cache can do the same (hand e.Encodings() to the
// reader and encode it with CacheEncode / Encoded).
func (e *entry) Encodings() *cacheable.Object {
	if o := e.encodings.Load(); o != nil {
		return o
	}
	o := cacheable.New(e.object())
	if e.encodings.CompareAndSwap(nil, o) {
		return o
	}
	return e.encodings.Load()
}

// event is one change of the cache, shared by every watcher. It is
// immutable once published, except for the lazily built leave object.
//
// Several events may share a revision (an etcd transaction changing
// several keys): seq, not rv, tells events apart and orders them.
type event struct {
	typ watch.EventType // Added, Modified, Deleted, or Bookmark
	key string
	rv  uint64
	// seq numbers the cache's events, from 1, in the order they were
	// applied (0 for bookmarks); consecutive in the event window.
	seq uint64
	at  time.Time
	// times: when the store and the cache received the event, for the
	// dispatch latency histogram (see dispatchtimes.go).
	times eventTimes
	// cur is the new state (Added, Modified), the deleted object carrying
	// the deletion's revision (Deleted), or the bookmark object.
	cur *entry
	// prev is the state before the change (nil for Added).
	prev *entry

	leaveOnce sync.Once
	leave     runtime.Object

	// Shared serializations (cacheable.Object) of cur's object and of the
	// leave object, built on first need for watchers that take them. They
	// are held weakly: the watchers delivering the event keep them alive,
	// and an event kept in the window does not keep its encodings once it
	// is delivered (a watcher replaying the window encodes again).
	sharedMu            sync.Mutex
	shared, sharedLeave weak.Pointer[cacheable.Object]
}

// sharedObject is cur's object wrapped for encode-once delivery.
func (e *event) sharedObject() runtime.Object {
	return e.sharedWrap(&e.shared, e.cur.object)
}

// sharedLeaveObject is the leave object wrapped for encode-once delivery.
func (e *event) sharedLeaveObject() runtime.Object {
	return e.sharedWrap(&e.sharedLeave, e.leaveObject)
}

func (e *event) sharedWrap(p *weak.Pointer[cacheable.Object], obj func() runtime.Object) *cacheable.Object {
	e.sharedMu.Lock()
	defer e.sharedMu.Unlock()
	if o := p.Value(); o != nil {
		return o
	}
	o := cacheable.New(obj())
	*p = weak.Make(o)
	return o
}

// leaveObject is what a watcher whose selector the object leaves gets in its
// DELETED event: the previous state with the event's revision. It is built
// once per event, on first need, and shared.
func (e *event) leaveObject() runtime.Object {
	e.leaveOnce.Do(func() {
		prev := e.prev.object()
		obj := prev.DeepCopyObject()
		if err := storage.SetObjectResourceVersion(obj, e.rv); err != nil {
			obj = prev // cannot happen for objects with metadata
		}
		e.leave = obj
	})
	return e.leave
}

// objStore is the current objects, sorted by key. Guarded by Cacher.mu.
//
// Snapshots share its slice copy-on-write: [objStore.snapshot] hands out
// the slice itself and marks it shared; the next write copies it first
// (one copy of the pointers per snapshot taken, however many writes
// follow), so a snapshot costs nothing to take and stays immutable.
type objStore struct {
	items  []*entry
	shared bool // items is held by a snapshot: copy before writing
}

// snapshot returns the current items, immutable from now on.
func (s *objStore) snapshot() []*entry {
	s.shared = true
	return s.items
}

// own makes items writable (a private copy if a snapshot holds them).
func (s *objStore) own(extra int) {
	if s.shared {
		items := make([]*entry, len(s.items), len(s.items)+extra)
		copy(items, s.items)
		s.items, s.shared = items, false
	}
}

func cmpKey(e *entry, key string) int { return strings.Compare(e.key, key) }

func (s *objStore) get(key string) *entry {
	if i, ok := slices.BinarySearchFunc(s.items, key, cmpKey); ok {
		return s.items[i]
	}
	return nil
}

// put stores e and returns the entry it replaced, if any.
func (s *objStore) put(e *entry) *entry {
	i, ok := slices.BinarySearchFunc(s.items, e.key, cmpKey)
	s.own(1)
	if ok {
		prev := s.items[i]
		s.items[i] = e
		return prev
	}
	s.items = slices.Insert(s.items, i, e)
	return nil
}

// remove deletes key and returns its entry, if any.
func (s *objStore) remove(key string) *entry {
	i, ok := slices.BinarySearchFunc(s.items, key, cmpKey)
	if !ok {
		return nil
	}
	s.own(0)
	prev := s.items[i]
	s.items = slices.Delete(s.items, i, i+1)
	return prev
}

// scan calls fn with every entry whose key has prefix, in key order.
func (s *objStore) scan(prefix string, fn func(*entry)) {
	i, _ := slices.BinarySearchFunc(s.items, prefix, cmpKey)
	for ; i < len(s.items) && strings.HasPrefix(s.items[i].key, prefix); i++ {
		fn(s.items[i])
	}
}

// snapshot is the state of the cache's objects at every revision from
// from to to (inclusive): nothing under the prefix changed in between.
// Its items are shared and immutable.
type snapshot struct {
	items    []*entry
	from, to uint64
	taken    time.Time
}

// snapshots are the recent snapshots, oldest first (ascending revisions,
// disjoint ranges). Guarded by Cacher.mu.
type snapshots struct {
	list []*snapshot
}

// find returns the snapshot holding the state at rev, or nil.
func (ss *snapshots) find(rev uint64) *snapshot {
	i, ok := slices.BinarySearchFunc(ss.list, rev, func(s *snapshot, rev uint64) int {
		switch {
		case s.to < rev:
			return -1
		case s.from > rev:
			return 1
		}
		return 0
	})
	if !ok {
		return nil
	}
	return ss.list[i]
}

// add records the current state (valid from..to), extending the newest
// snapshot if it is the same state, and drops the oldest beyond limit.
func (ss *snapshots) add(items []*entry, from, to uint64, now time.Time, limit int) *snapshot {
	if n := len(ss.list); n > 0 {
		last := ss.list[n-1]
		if last.from == from && len(last.items) == len(items) && (len(items) == 0 || &last.items[0] == &items[0]) {
			last.to = max(last.to, to)
			last.taken = now
			return last
		}
	}
	s := &snapshot{items: items, from: from, to: to, taken: now}
	ss.list = append(ss.list, s)
	if over := len(ss.list) - limit; over > 0 {
		ss.list = slices.Delete(ss.list, 0, over)
	}
	return s
}

// expire drops the snapshots taken before cutoff and those that end
// before revision minRev (compacted).
func (ss *snapshots) expire(cutoff time.Time, minRev uint64) {
	ss.list = slices.DeleteFunc(ss.list, func(s *snapshot) bool {
		return s.taken.Before(cutoff) || s.to < minRev
	})
}

func (ss *snapshots) reset() { ss.list = nil }

// page is one page of a list read from a sorted slice of entries.
type page struct {
	matched   []*entry
	fetched   int
	hasMore   bool
	lastKey   string // the last key examined (the next page starts after it)
	remaining int64  // keys in range after lastKey (when hasMore)
}

// readPage reads, from the sorted items, the entries whose keys have
// prefix, starting at from, that match, up to limit of them (0: all).
// As the stores: the page ends when limit entries matched and another key
// is in range; lastKey is the last key examined.
func readPage(items []*entry, prefix, from string, limit int64, match func(*entry) bool) page {
	var p page
	i, _ := slices.BinarySearchFunc(items, from, cmpKey)
	for ; i < len(items) && strings.HasPrefix(items[i].key, prefix); i++ {
		if limit > 0 && int64(len(p.matched)) >= limit {
			p.hasMore = true
			break
		}
		e := items[i]
		p.fetched++
		p.lastKey = e.key
		if match(e) {
			p.matched = append(p.matched, e)
		}
	}
	if p.hasMore {
		end, _ := slices.BinarySearchFunc(items[i:], prefixEnd(prefix), cmpKey)
		p.remaining = int64(end)
	}
	return p
}

// prefixEnd is the first key after every key with prefix.
func prefixEnd(prefix string) string {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return "\xff" // cannot happen: keys are paths
}

// ring is the window of recent events, oldest first, in revision order.
// Guarded by Cacher.mu.
type ring struct {
	buf   []*event
	start int
	n     int
}

func newRing(capacity int) ring { return ring{buf: make([]*event, capacity)} }

func (r *ring) at(i int) *event { return r.buf[(r.start+i)%len(r.buf)] }

func (r *ring) full() bool { return r.n == len(r.buf) }

func (r *ring) push(e *event) {
	r.buf[(r.start+r.n)%len(r.buf)] = e
	r.n++
}

// dropOldest removes the k oldest events and returns the newest one removed.
func (r *ring) dropOldest(k int) *event {
	var last *event
	for ; k > 0 && r.n > 0; k-- {
		last = r.buf[r.start]
		r.buf[r.start] = nil
		r.start = (r.start + 1) % len(r.buf)
		r.n--
	}
	return last
}

// resize changes the capacity to c (>= r.n).
func (r *ring) resize(c int) {
	buf := make([]*event, c)
	for i := range r.n {
		buf[i] = r.at(i)
	}
	r.buf, r.start = buf, 0
}

func (r *ring) reset(capacity int) { *r = newRing(capacity) }

// since returns a copy of the events with a revision after rv.
func (r *ring) since(rv uint64) []*event {
	// Events are in revision order: binary search the first one after rv.
	lo, hi := 0, r.n
	for lo < hi {
		m := (lo + hi) / 2
		if r.at(m).rv <= rv {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return r.tail(lo)
}

// fromSeq returns a copy of the events from the one numbered seq on; ok is
// false if that event has left the window.
func (r *ring) fromSeq(seq uint64) (out []*event, ok bool) {
	if r.n == 0 || r.at(0).seq > seq {
		return nil, false
	}
	lo, hi := 0, r.n
	for lo < hi {
		m := (lo + hi) / 2
		if r.at(m).seq < seq {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return r.tail(lo), true
}

// tail returns a copy of the events from index i on.
func (r *ring) tail(i int) []*event {
	out := make([]*event, 0, r.n-i)
	for ; i < r.n; i++ {
		out = append(out, r.at(i))
	}
	return out
}
