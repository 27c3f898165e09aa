package etcd3

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// encode serializes obj for etcd. As kube, the stored form has no
// resourceVersion (it is etcd's ModRevision) and no selfLink; obj is
// modified accordingly. Objects over MaxObjectSize are refused.
func (s *Store) encode(key string, obj runtime.Object) ([]byte, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, &storage.StorageError{Code: storage.ErrCodeInvalidObj, Key: key, Message: "object has no metadata", Err: err}
	}
	m.SetResourceVersion("")
	m.SetSelfLink("")
	data, err := runtime.Encode(s.codec, obj)
	if err != nil {
		return nil, &storage.StorageError{Code: storage.ErrCodeInvalidObj, Key: key, Message: "encode", Err: err}
	}
	if len(data) > MaxObjectSize {
		return nil, storage.NewError(storage.ErrCodeRequestTooLarge, key, 0,
			fmt.Sprintf("object is %d bytes encoded, over the limit of %d bytes", len(data), MaxObjectSize))
	}
	return data, nil
}

// decode fills into (zeroed first, so nothing of its old content
// survives) from data and sets its resourceVersion to rev.
func (s *Store) decode(key string, data []byte, into runtime.Object, rev int64) error {
	v, err := conversion.EnforcePtr(into)
	if err != nil {
		return fmt.Errorf("etcd3: decode %q: %w", key, err)
	}
	v.Set(reflect.Zero(v.Type()))
	return s.decodeFresh(key, data, into, rev)
}

// decodeFresh decodes data into a new, empty object and sets its
// resourceVersion to rev.
func (s *Store) decodeFresh(key string, data []byte, into runtime.Object, rev int64) error {
	if _, _, err := s.codec.Decode(data, nil, into); err != nil {
		s.metrics.DecodeError()
		return &storage.StorageError{Code: storage.ErrCodeInvalidObj, Key: key, ResourceVersion: rev, Message: "decode", Err: err}
	}
	if err := storage.SetObjectResourceVersion(into, uint64(rev)); err != nil {
		return &storage.StorageError{Code: storage.ErrCodeInvalidObj, Key: key, ResourceVersion: rev, Message: "set resourceVersion", Err: err}
	}
	return nil
}

// decodeNew decodes data into a fresh object from newObj.
func (s *Store) decodeNew(key string, data []byte, newObj func() runtime.Object, rev int64) (runtime.Object, error) {
	obj := newObj()
	if err := s.decodeFresh(key, data, obj, rev); err != nil {
		return nil, err
	}
	return obj, nil
}

// newLike returns a constructor of empty objects of obj's type (obj is a
// pointer); for unstructured objects, an empty instance.
func newLike(obj runtime.Object) func() runtime.Object {
	if u, ok := obj.(runtime.Unstructured); ok {
		return func() runtime.Object { return u.NewEmptyInstance() }
	}
	t := reflect.TypeOf(obj).Elem()
	return func() runtime.Object { return reflect.New(t).Interface().(runtime.Object) }
}

// listAppender appends decoded items to the Items slice of a list object,
// whatever its element kind (struct, pointer or interface).
type listAppender struct {
	items   reflect.Value // the Items slice (settable)
	newItem func() runtime.Object
	add     func(obj runtime.Object)
}

func newListAppender(listObj runtime.Object, newFunc func() runtime.Object) (*listAppender, error) {
	ptr, err := meta.GetItemsPtr(listObj)
	if err != nil {
		return nil, fmt.Errorf("etcd3: list object %T: %w", listObj, err)
	}
	items, err := conversion.EnforcePtr(ptr)
	if err != nil || items.Kind() != reflect.Slice {
		return nil, fmt.Errorf("etcd3: list object %T: items are not a slice", listObj)
	}
	a := &listAppender{items: items}
	elem := items.Type().Elem()
	switch elem.Kind() {
	case reflect.Struct:
		a.newItem = func() runtime.Object { return reflect.New(elem).Interface().(runtime.Object) }
		a.add = func(obj runtime.Object) { a.items.Set(reflect.Append(a.items, reflect.ValueOf(obj).Elem())) }
	case reflect.Pointer:
		a.newItem = func() runtime.Object { return reflect.New(elem.Elem()).Interface().(runtime.Object) }
		a.add = func(obj runtime.Object) { a.items.Set(reflect.Append(a.items, reflect.ValueOf(obj))) }
	case reflect.Interface:
		if newFunc == nil {
			return nil, fmt.Errorf("etcd3: list object %T: items are interfaces and no NewFunc is configured", listObj)
		}
		a.newItem = newFunc
		a.add = func(obj runtime.Object) { a.items.Set(reflect.Append(a.items, reflect.ValueOf(obj))) }
	default:
		return nil, fmt.Errorf("etcd3: list object %T: unsupported item kind %s", listObj, elem.Kind())
	}
	// Unstructured lists keep their apiVersion on the items.
	if ul, ok := listObj.(*unstructured.UnstructuredList); ok {
		if apiVersion := ul.GetAPIVersion(); apiVersion != "" {
			a.newItem = func() runtime.Object {
				return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion}}
			}
		}
	}
	return a, nil
}

// grow reserves room for n more items (bounded, to avoid huge allocations
// for filtered lists).
func (a *listAppender) grow(n int) {
	const maxGrow = 2048
	n = min(n, maxGrow)
	if a.items.Cap()-a.items.Len() >= n {
		return
	}
	grown := reflect.MakeSlice(a.items.Type(), a.items.Len(), a.items.Len()+n)
	reflect.Copy(grown, a.items)
	a.items.Set(grown)
}

func (a *listAppender) len() int { return a.items.Len() }

// finish makes sure Items is never nil.
func (a *listAppender) finish() {
	if a.items.IsNil() {
		a.items.Set(reflect.MakeSlice(a.items.Type(), 0, 0))
	}
}
