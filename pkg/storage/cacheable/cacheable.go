package cacheable

import (
	"bytes"
	"context"
	"io"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Object is an immutable object whose serializations are computed once
// per encoder and shared.
type Object struct {
	obj runtime.Object

	// results is a list of the encodings asked for, one per id, newest
	// first. Nodes are only ever added at the head (by compare-and-swap),
	// never changed or removed, so readers walk it without a lock: every
	// watcher of an event asks for the same encoding at about the same
	// time, and a mutex and map lookup per request was contended by all
	// of them (an object has one to three ids in practice).
	results atomic.Pointer[result]
}

type result struct {
	id   runtime.Identifier
	next *result // the encodings asked for before this one

	once sync.Once
	raw  []byte
	err  error
}

var _ runtime.CacheableObject = (*Object)(nil)

// New wraps obj, which nobody may change from now on.
func New(obj runtime.Object) *Object { return &Object{obj: obj} }

// CacheEncode implements runtime.CacheableObject: the first call for id
// runs encode on a deep copy of the object and keeps its output (or
// error); every call writes that output to w.
func (o *Object) CacheEncode(id runtime.Identifier, encode func(runtime.Object, io.Writer) error, w io.Writer) error {
	raw, err := o.Encoded(id, encode)
	if err != nil {
		return err
	}
	_, err = w.Write(raw)
	return err
}

// Encoded returns what encode writes for a deep copy of the object, run
// once for id (its output, or its error, is kept and shared). The bytes
// are shared: the caller must not change them. A list response writes
// its items' Encoded bytes one after another; a GET response may write
// its object's.
func (o *Object) Encoded(id runtime.Identifier, encode func(runtime.Object, io.Writer) error) ([]byte, error) {
	return o.encoded(id, encode, true)
}

// EncodedShared is Encoded for an encode that never changes the object it
// encodes: it gets the shared object itself, not a copy.
func (o *Object) EncodedShared(id runtime.Identifier, encode func(runtime.Object, io.Writer) error) ([]byte, error) {
	return o.encoded(id, encode, false)
}

func (o *Object) encoded(id runtime.Identifier, encode func(runtime.Object, io.Writer) error, copy bool) ([]byte, error) {
	r := o.result(id)
	r.once.Do(func() {
		obj := o.obj
		if copy {
			obj = obj.DeepCopyObject()
		}
		var buf bytes.Buffer
		r.err = encode(obj, &buf)
		r.raw = buf.Bytes()
	})
	return r.raw, r.err
}

// result returns the result for id, adding an empty one if there is none.
func (o *Object) result(id runtime.Identifier) *result {
	var added *result
	for {
		head := o.results.Load()
		for r := head; r != nil; r = r.next {
			if r.id == id {
				return r
			}
		}
		if added == nil {
			added = &result{id: id}
		}
		added.next = head
		if o.results.CompareAndSwap(head, added) {
			return added
		}
		// Another id (or this one) was added meanwhile: look again.
	}
}

// GetObject implements runtime.CacheableObject: a deep copy of the object,
// the caller's to change.
func (o *Object) GetObject() runtime.Object { return o.obj.DeepCopyObject() }

// GetObjectKind implements runtime.Object with the wrapped object's kind
// (read only: the object is shared).
func (o *Object) GetObjectKind() schema.ObjectKind { return o.obj.GetObjectKind() }

// DeepCopyObject implements runtime.Object: a new Object around a copy,
// with no serializations yet.
func (o *Object) DeepCopyObject() runtime.Object { return New(o.obj.DeepCopyObject()) }

type ctxKey struct{}

// WithObjects asks a watch cache to send Objects on the watch started
// with the returned context.
func WithObjects(ctx context.Context) context.Context {
	return context.WithValue(ctx, ctxKey{}, true)
}

// Wanted reports whether the watch started with ctx takes Objects.
func Wanted(ctx context.Context) bool {
	v, _ := ctx.Value(ctxKey{}).(bool)
	return v
}

type itemsKey struct{}

// Items receives the objects of one read (a list's items, in order) as
// shared Objects, from a storage that can hand them out without copying
// them: a watch cache. The reader asks with [WithItems] and encodes the
// Objects (their bytes are kept with the cache's entries and reused by
// later reads); a storage that does not fill it returns its objects as
// usual.
type Items struct {
	objs []*Object
	set  bool
}

// WithItems asks the storage read made with the returned context to hand
// its objects to the returned Items instead of copying them into the list
// it fills (which then gets the list's metadata only).
func WithItems(ctx context.Context) (context.Context, *Items) {
	it := &Items{}
	return context.WithValue(ctx, itemsKey{}, it), it
}

// ItemsWanted returns the Items a read with ctx fills, or nil.
func ItemsWanted(ctx context.Context) *Items {
	it, _ := ctx.Value(itemsKey{}).(*Items)
	return it
}

// Set hands the read's objects over (a storage calls it once).
func (it *Items) Set(objs []*Object) { it.objs, it.set = objs, true }

// Get returns the objects handed over; ok is false if the storage did not
// fill it (its list holds the objects).
func (it *Items) Get() (objs []*Object, ok bool) { return it.objs, it.set }
