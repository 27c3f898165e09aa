package generic

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/storage"
)

// The storage operations of the store, with kube's dry-run semantics: a
// dry run reads, checks and computes exactly what the write would, and
// writes nothing (no resourceVersion is consumed).

// withTTL returns ctx for a write of the store: with its TTL, if any.
func (e *Store) withTTL(ctx context.Context) context.Context {
	if e.TTL == 0 {
		return ctx
	}
	return storage.WithTTL(ctx, e.TTL)
}

func (e *Store) storageCreate(ctx context.Context, key string, obj, out runtime.Object, dryRun bool) error {
	if !dryRun {
		return e.Storage.Create(e.withTTL(ctx), key, obj, out)
	}
	err := e.Storage.Get(ctx, key, storage.GetOptions{}, out)
	switch {
	case err == nil:
		return storage.NewError(storage.ErrCodeKeyExists, key, 0, "")
	case !storage.IsNotFound(err):
		return err
	}
	if err := setInto(out, obj); err != nil {
		return err
	}
	defaultAsRead(out)
	return storage.SetObjectResourceVersion(out, 0)
}

func (e *Store) storageUpdate(ctx context.Context, key string, out runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, dryRun bool) error {
	if !dryRun {
		return e.Storage.GuaranteedUpdate(e.withTTL(ctx), key, out, ignoreNotFound, preconditions, tryUpdate, nil)
	}
	current := e.NewFunc()
	if err := e.Storage.Get(ctx, key, storage.GetOptions{IgnoreNotFound: ignoreNotFound}, current); err != nil {
		return err
	}
	if err := checkPreconditions(key, preconditions, current); err != nil {
		return err
	}
	updated, err := tryUpdate(current)
	if err != nil {
		return err
	}
	if err := setInto(out, updated); err != nil {
		return err
	}
	defaultAsRead(out)
	return nil
}

// defaultAsRead applies the defaults a read of obj from storage would:
// upstream's dry run hands its result through the storage codec
// (DryRunnableStorage.copyInto, k8s.io/apiserver v0.37
// registry/generic/registry/dryrun.go), whose decode defaults it, so a
// dry-run Job shows the metadata.labels SetDefaults_Job copies from the
// template labels the strategy generated, as a real create's response
// (read back from storage) does. Custom resources are defaulted when
// their request is decoded and are left as they are.
func defaultAsRead(obj runtime.Object) {
	if _, ok := obj.(runtime.Unstructured); ok {
		return
	}
	scheme.Scheme.Default(obj)
}

func (e *Store) storageDelete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validate storage.ValidateObjectFunc, dryRun bool) error {
	if !dryRun {
		return e.Storage.Delete(ctx, key, out, preconditions, validate, nil)
	}
	if err := e.Storage.Get(ctx, key, storage.GetOptions{}, out); err != nil {
		return err
	}
	if err := checkPreconditions(key, preconditions, out); err != nil {
		return err
	}
	if validate != nil {
		return validate(ctx, out)
	}
	return nil
}

// checkPreconditions checks p against obj with the storage's messages.
func checkPreconditions(key string, p *storage.Preconditions, obj runtime.Object) error {
	if p == nil {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return storage.NewError(storage.ErrCodeInvalidObj, key, 0, err.Error())
	}
	if p.UID != nil && *p.UID != m.GetUID() {
		return storage.NewError(storage.ErrCodeResourceVersionConflicts, key, 0,
			fmt.Sprintf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, m.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion() {
		return storage.NewError(storage.ErrCodeResourceVersionConflicts, key, 0,
			fmt.Sprintf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v",
				*p.ResourceVersion, m.GetResourceVersion()))
	}
	return nil
}

// setInto makes dst a deep copy of src (same type).
func setInto(dst, src runtime.Object) error {
	if u, ok := dst.(runtime.Unstructured); ok {
		s, ok := src.(runtime.Unstructured)
		if !ok {
			return fmt.Errorf("copy %T into %T: not unstructured", src, dst)
		}
		u.SetUnstructuredContent(runtime.DeepCopyJSON(s.UnstructuredContent()))
		return nil
	}
	dv, sv := reflect.ValueOf(dst), reflect.ValueOf(src)
	if dv.Kind() != reflect.Pointer || dv.Type() != sv.Type() || dv.IsNil() || sv.IsNil() {
		return fmt.Errorf("copy %T into %T: types differ", src, dst)
	}
	dv.Elem().Set(reflect.ValueOf(src.DeepCopyObject()).Elem())
	return nil
}
