package memory

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
)

// listedState is a key's state (the version at rev) decoded once by one
// Store's lists, as an object of type typ, and kept with the key's history
// until the key is next written: later lists of the same state match their
// predicates against it and hand out deep copies of it (or, when the
// reader asks with cacheable.WithItems, its shared, encode-once wrapper)
// instead of decoding the stored bytes again. This is what the watch cache
// keeps per entry on etcd; here it exists only for keys that were listed.
//
// Only one Store's decoding is kept per key (the last to list it): the
// stores of a custom resource's served versions decode the same keys into
// different versions; alternating lists of two versions decode each time,
// as before.
type listedState struct {
	store *Store
	rev   uint64
	typ   reflect.Type
	*sharedObject
}

// listedObject returns e's state decoded for s's lists as an object of the
// type newItem makes (typ is that type): the kept one when it is of that
// state, store and type, else a new decoding, which it keeps unless the key
// holds a newer state's. The object is shared: read it, never change it.
//
// A list that read e before a write of the key and decodes it after may
// keep the superseded state (the write cleared the key's decoding first);
// it is never used for the newer state (its rev differs) and is replaced
// by the next list of the key or dropped by its next write: at most one
// decoded object per key.
func (s *Store) listedObject(e kv, typ reflect.Type, newItem func() runtime.Object) (*sharedObject, error) {
	var old *listedState
	if e.h != nil {
		old = e.h.listed.Load()
		if old != nil && old.rev == e.rev && old.store == s && old.typ == typ {
			return old.sharedObject, nil
		}
	}
	obj := newItem()
	if err := s.decode(e.key, e.data, obj, e.rev); err != nil {
		return nil, err
	}
	so := &sharedObject{obj: obj, wrapped: cacheable.New(obj)}
	if e.h != nil && (old == nil || old.rev <= e.rev) {
		// Lost races leave the other list's decoding: either is correct.
		e.h.listed.CompareAndSwap(old, &listedState{store: s, rev: e.rev, typ: typ, sharedObject: so})
	}
	return so, nil
}
