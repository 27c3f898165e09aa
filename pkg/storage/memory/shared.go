package memory

import (
	"sync"
	"sync/atomic"
	"weak"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
)

// sharedObject is one of an event's objects decoded once for every watcher
// of a Store that takes shared objects (cacheable.Wanted): obj is matched
// against the watchers' predicates (read only), wrapped is sent, encoded
// once per encoder.
type sharedObject struct {
	obj     runtime.Object
	wrapped *cacheable.Object
}

// decodedEvent holds an event's shared objects, weakly: a watcher holds them
// while it delivers the event, and an event kept in the history does not
// keep its decoded objects once they are sent (a late watcher, one reading
// the history, decodes again). Only one Store's decodings are kept (the
// first to ask): another Store reading the same keys (another served
// version of a custom resource) decodes per watcher, as before.
//
// The state is an immutable view, replaced (under mu) when it changes, so
// that the watchers of an event, every one of which asks for the same
// objects, find them without a lock: with many watchers woken together a
// lock was contended once per event and watcher. Only a reader that finds
// the view lacking takes mu.
type decodedEvent struct {
	mu   sync.Mutex // serializes the replacements of view
	view atomic.Pointer[decodedView]
}

// decodedView is a decodedEvent's state: the Store whose decodings are
// kept (nil until the first asks; it never changes once set) and the
// objects, weakly.
type decodedView struct {
	store     *Store
	cur, prev weak.Pointer[sharedObject]
}

// ownedView returns, under d.mu, a copy of d's view to change and publish
// (d.view.Store), or false if another Store than s owns the event's
// decodings.
func (d *decodedEvent) ownedView(s *Store) (decodedView, bool) {
	v := d.view.Load()
	if v == nil {
		return decodedView{store: s}, true
	}
	return *v, v.store == s
}

// sharedObjects returns the event's new object (puts) and previous object
// (if wantPrev and there is one), decoded with the event's revision, shared
// by s's watchers; ok is false if s cannot share this event's objects or
// they do not decode (the caller decodes its own, which reports the error).
func (s *Store) sharedObjects(ev *event, wantPrev bool) (cur, prev *sharedObject, ok bool) {
	d := &ev.decoded
	if v := d.view.Load(); v != nil {
		if v.store != s {
			return nil, nil, false
		}
		found := true
		if ev.kind == eventPut {
			cur = v.cur.Value()
			found = cur != nil
		}
		if found && wantPrev && ev.prev != nil {
			prev = v.prev.Value()
			found = prev != nil
		}
		if found {
			return cur, prev, true
		}
		cur, prev = nil, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	v, owned := d.ownedView(s)
	if !owned {
		return nil, nil, false
	}
	defer func() { d.view.Store(&v) }()
	get := func(p *weak.Pointer[sharedObject], val *blob) *sharedObject {
		if so := p.Value(); so != nil {
			return so
		}
		obj := s.newFunc()
		if err := s.decode(ev.key, val.bytes(), obj, ev.rev); err != nil {
			return nil
		}
		so := &sharedObject{obj: obj, wrapped: cacheable.New(obj)}
		*p = weak.Make(so)
		return so
	}
	if ev.kind == eventPut {
		if cur = get(&v.cur, ev.value); cur == nil {
			return nil, nil, false
		}
	}
	if wantPrev && ev.prev != nil {
		if prev = get(&v.prev, ev.prev); prev == nil {
			return nil, nil, false
		}
	}
	return cur, prev, true
}

// seed makes obj, the event's new object as s decodes it (a put's value
// decoded with the event's revision, owned by the caller and not changed
// by it afterwards), the event's shared decoded object, unless a watcher
// decoded it first or the event belongs to another Store. The writer that
// has just decoded what it stored calls it before waking the watchers:
// they then copy the object (shared watchers take it as is) instead of
// decoding the value once more. It is held weakly, like a decoding.
func (s *Store) seed(ev *event, obj runtime.Object) {
	d := &ev.decoded
	d.mu.Lock()
	defer d.mu.Unlock()
	v, owned := d.ownedView(s)
	if !owned || v.cur.Value() != nil {
		return
	}
	so := &sharedObject{obj: obj, wrapped: cacheable.New(obj)}
	v.cur = weak.Make(so)
	d.view.Store(&v)
}

// seededCopy returns a copy of the event's new object if s seeded or
// decoded it and it is still held, for a watcher that takes private
// objects; nil otherwise (the watcher decodes).
func (s *Store) seededCopy(ev *event) runtime.Object {
	v := ev.decoded.view.Load()
	if v == nil || v.store != s {
		return nil
	}
	if so := v.cur.Value(); so != nil {
		return so.obj.DeepCopyObject()
	}
	return nil
}
