package cacher

import (
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
)

// entry is one object as the cache holds it, with the attributes predicates
// match against. Entries are immutable once built; obj is shared.
type entry struct {
	key    string
	obj    runtime.Object
	rv     uint64
	labels labels.Set
	fields fields.Set
}

// event is one change of the cache, shared by every watcher. It is
// immutable once published, except for the lazily built leave object.
type event struct {
	typ watch.EventType // Added, Modified, Deleted, or Bookmark
	key string
	rv  uint64
	at  time.Time
	// cur is the new state (Added, Modified), the deleted object carrying
	// the deletion's revision (Deleted), or the bookmark object.
	cur *entry
	// prev is the state before the change (nil for Added).
	prev *entry

	leaveOnce sync.Once
	leave     runtime.Object

	// Shared serializations (cacheable.Object) of cur's object and of the
	// leave object, built on first need for watchers that take them.
	sharedOnce, sharedLeaveOnce sync.Once
	shared, sharedLeave         *cacheable.Object
}

// sharedObject is cur's object wrapped for encode-once delivery.
func (e *event) sharedObject() runtime.Object {
	e.sharedOnce.Do(func() { e.shared = cacheable.New(e.cur.obj) })
	return e.shared
}

// sharedLeaveObject is the leave object wrapped for encode-once delivery.
func (e *event) sharedLeaveObject() runtime.Object {
	e.sharedLeaveOnce.Do(func() { e.sharedLeave = cacheable.New(e.leaveObject()) })
	return e.sharedLeave
}

// leaveObject is what a watcher whose selector the object leaves gets in its
// DELETED event: the previous state with the event's revision. It is built
// once per event, on first need, and shared.
func (e *event) leaveObject() runtime.Object {
	e.leaveOnce.Do(func() {
		obj := e.prev.obj.DeepCopyObject()
		if err := storage.SetObjectResourceVersion(obj, e.rv); err != nil {
			obj = e.prev.obj // cannot happen for objects with metadata
		}
		e.leave = obj
	})
	return e.leave
}

// objStore is the current objects, sorted by key. Guarded by Cacher.mu.
type objStore struct {
	items []*entry
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
	out := make([]*event, 0, r.n-lo)
	for i := lo; i < r.n; i++ {
		out = append(out, r.at(i))
	}
	return out
}
