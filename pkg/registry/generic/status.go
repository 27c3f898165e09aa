package generic

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// The status split: the main resource ignores status (its strategy keeps
// the stored status with CopyStatus on update, and clears it with
// ClearStatus on create), and the /status subresource ignores everything
// else ([StatusStrategy], served by [StatusREST]).

// CopyStatus sets dst's status to a deep copy of src's (same type; a
// missing status in an unstructured src removes dst's).
func CopyStatus(dst, src runtime.Object) error {
	if u, ok := dst.(runtime.Unstructured); ok {
		s, ok := src.(runtime.Unstructured)
		if !ok {
			return fmt.Errorf("copy status of %T into %T: not unstructured", src, dst)
		}
		content := u.UnstructuredContent()
		if status, ok := s.UnstructuredContent()["status"]; ok {
			content["status"] = runtime.DeepCopyJSONValue(status)
		} else {
			delete(content, "status")
		}
		return nil
	}
	d, err := statusField(dst)
	if err != nil {
		return err
	}
	s, err := statusField(src)
	if err != nil {
		return err
	}
	if d.Type() != s.Type() {
		return fmt.Errorf("copy status of %T into %T: types differ", src, dst)
	}
	d.Set(reflect.ValueOf(src.DeepCopyObject()).Elem().FieldByName("Status"))
	return nil
}

// ClearStatus resets obj's status to its zero value (removes it from an
// unstructured object).
func ClearStatus(obj runtime.Object) error {
	if u, ok := obj.(runtime.Unstructured); ok {
		delete(u.UnstructuredContent(), "status")
		return nil
	}
	f, err := statusField(obj)
	if err != nil {
		return err
	}
	f.SetZero()
	return nil
}

// CopyAllButStatus makes dst a copy of src except for its status and its
// managedFields (which the handler computed for this request): what a
// /status update keeps of the stored object.
func CopyAllButStatus(dst, src runtime.Object) error {
	m, err := meta.Accessor(dst)
	if err != nil {
		return err
	}
	managed := m.GetManagedFields()
	status := dst.DeepCopyObject()
	if err := setInto(dst, src); err != nil {
		return err
	}
	if err := CopyStatus(dst, status); err != nil {
		return err
	}
	m, err = meta.Accessor(dst)
	if err != nil {
		return err
	}
	m.SetManagedFields(managed)
	return nil
}

func statusField(obj runtime.Object) (reflect.Value, error) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, fmt.Errorf("%T is not a pointer to a struct", obj)
	}
	f := v.Elem().FieldByName("Status")
	if !f.IsValid() || !f.CanSet() {
		return reflect.Value{}, fmt.Errorf("%T has no Status field", obj)
	}
	return f, nil
}

// ResetFields returns the same field set for each group-version (for a
// rest.ResetFieldsStrategy); each path is a list of field names, e.g.
// ResetFields(gvs, []string{"status"}).
func ResetFields(gvs []schema.GroupVersion, paths ...[]string) map[fieldpath.APIVersion]*fieldpath.Set {
	out := make(map[fieldpath.APIVersion]*fieldpath.Set, len(gvs))
	for _, gv := range gvs {
		set := fieldpath.NewSet()
		for _, p := range paths {
			parts := make([]any, len(p))
			for i, s := range p {
				parts[i] = s
			}
			set.Insert(fieldpath.MakePathOrDie(parts...))
		}
		out[fieldpath.APIVersion(gv.String())] = set
	}
	return out
}

// StatusStrategy is the UpdateStrategy of a /status subresource, derived
// from the main resource's: an update keeps everything of the stored
// object but its status (and the request's managedFields), create-on-update
// is never allowed, and generation never changes. Scope, unconditional
// updates and canonicalization are the main strategy's.
type StatusStrategy struct {
	UpdateStrategy
	// ValidateStatus validates a status update (nil: only metadata is
	// validated).
	ValidateStatus func(ctx context.Context, obj, old runtime.Object) field.ErrorList
	// PrepareStatus, optional, adjusts the new status once everything but
	// the status has been copied from old (upstream's status strategies'
	// PrepareForUpdate: e.g. dropping the fields of features that are off).
	PrepareStatus func(obj, old runtime.Object)
	// GroupVersions served, for GetResetFields: server-side apply through
	// /status must not change spec.
	GroupVersions []schema.GroupVersion
}

var (
	_ UpdateStrategy           = StatusStrategy{}
	_ rest.ResetFieldsStrategy = StatusStrategy{}
)

// AllowCreateOnUpdate implements UpdateStrategy: never.
func (StatusStrategy) AllowCreateOnUpdate() bool { return false }

// PrepareForUpdate implements UpdateStrategy: only status changes.
func (s StatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	// Both are objects of the store's type: this cannot fail.
	if err := CopyAllButStatus(obj, old); err != nil {
		panic(fmt.Sprintf("status update: %v", err))
	}
	if s.PrepareStatus != nil {
		s.PrepareStatus(obj, old)
	}
}

// ValidateUpdate implements UpdateStrategy.
func (s StatusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	if s.ValidateStatus == nil {
		return nil
	}
	return s.ValidateStatus(ctx, obj, old)
}

// WarningsOnUpdate implements UpdateStrategy: none.
func (StatusStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// GetResetFields implements rest.ResetFieldsStrategy: spec.
func (s StatusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return ResetFields(s.GroupVersions, []string{"spec"})
}

// StatusREST serves the /status subresource of a Store: get and update
// (never create) with the status strategy.
type StatusREST struct {
	store *Store
}

var (
	_ rest.Storage             = (*StatusREST)(nil)
	_ rest.Getter              = (*StatusREST)(nil)
	_ rest.Updater             = (*StatusREST)(nil)
	_ rest.Patcher             = (*StatusREST)(nil)
	_ rest.TableConvertor      = (*StatusREST)(nil)
	_ rest.ResetFieldsStrategy = (*StatusREST)(nil)
)

// NewStatusREST returns the /status subresource of main (a completed
// Store), updating with strategy (usually a [StatusStrategy]). It shares
// main's storage.
func NewStatusREST(main *Store, strategy UpdateStrategy) *StatusREST {
	s := *main
	s.UpdateStrategy = strategy
	s.ResetFieldsStrategy = nil
	if r, ok := strategy.(rest.ResetFieldsStrategy); ok {
		s.ResetFieldsStrategy = r
	}
	s.DestroyFunc = nil
	return &StatusREST{store: &s}
}

// New implements rest.Storage.
func (r *StatusREST) New() runtime.Object { return r.store.New() }

// ConversionCheck returns the main resource's CheckConversion: a /status
// body is decoded as the same kind.
func (r *StatusREST) ConversionCheck() func(runtime.Object) error { return r.store.CheckConversion }

// Destroy implements rest.Storage: the storage is the main resource's,
// which destroys it.
func (r *StatusREST) Destroy() {}

// Get implements rest.Getter.
func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

// Update implements rest.Updater; a subresource never creates.
func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// GetResetFields implements rest.ResetFieldsStrategy.
func (r *StatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

// ConvertToTable implements rest.TableConvertor.
func (r *StatusREST) ConvertToTable(ctx context.Context, object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, object, tableOptions)
}
