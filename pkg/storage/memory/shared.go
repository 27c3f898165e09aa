package memory

import (
	"sync"
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
type decodedEvent struct {
	mu        sync.Mutex
	store     *Store
	cur, prev weak.Pointer[sharedObject]
}

// sharedObjects returns the event's new object (puts) and previous object
// (if wantPrev and there is one), decoded with the event's revision, shared
// by s's watchers; ok is false if s cannot share this event's objects or
// they do not decode (the caller decodes its own, which reports the error).
func (s *Store) sharedObjects(ev *event, wantPrev bool) (cur, prev *sharedObject, ok bool) {
	d := &ev.decoded
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.store == nil {
		d.store = s
	} else if d.store != s {
		return nil, nil, false
	}
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
		if cur = get(&d.cur, ev.value); cur == nil {
			return nil, nil, false
		}
	}
	if wantPrev && ev.prev != nil {
		if prev = get(&d.prev, ev.prev); prev == nil {
			return nil, nil, false
		}
	}
	return cur, prev, true
}
