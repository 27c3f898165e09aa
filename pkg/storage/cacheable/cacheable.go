package cacheable

import (
	"bytes"
	"context"
	"io"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Object is an immutable object whose serializations are computed once
// per encoder and shared.
type Object struct {
	obj runtime.Object

	mu      sync.Mutex
	results map[runtime.Identifier]*result
}

type result struct {
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
	r := o.result(id)
	r.once.Do(func() {
		var buf bytes.Buffer
		r.err = encode(o.obj.DeepCopyObject(), &buf)
		r.raw = buf.Bytes()
	})
	if r.err != nil {
		return r.err
	}
	_, err := w.Write(r.raw)
	return err
}

func (o *Object) result(id runtime.Identifier) *result {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.results == nil {
		o.results = make(map[runtime.Identifier]*result, 2)
	}
	r := o.results[id]
	if r == nil {
		r = &result{}
		o.results[id] = r
	}
	return r
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
