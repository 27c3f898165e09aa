package namespace

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage"
)

// Resource is the resource served.
var Resource = corev1.Resource("namespaces")

func errNotNamespace(obj runtime.Object) error {
	return fmt.Errorf("not a namespace: %T", obj)
}

// REST is the main namespaces resource: the generic store with the
// namespace lifecycle on delete. It has no deletecollection, as kube.
type REST struct {
	store *generic.Store
}

var (
	_ rest.Storage              = (*REST)(nil)
	_ rest.Scoper               = (*REST)(nil)
	_ rest.Getter               = (*REST)(nil)
	_ rest.Lister               = (*REST)(nil)
	_ rest.Watcher              = (*REST)(nil)
	_ rest.Creater              = (*REST)(nil)
	_ rest.Updater              = (*REST)(nil)
	_ rest.Patcher              = (*REST)(nil)
	_ rest.GracefulDeleter      = (*REST)(nil)
	_ rest.TableConvertor       = (*REST)(nil)
	_ rest.SingularNameProvider = (*REST)(nil)
	_ rest.ShortNamesProvider   = (*REST)(nil)
	_ rest.ResetFieldsStrategy  = (*REST)(nil)
)

// FinalizeREST is the namespaces/finalize subresource: update only (no
// get, hence no patch), as kube.
type FinalizeREST struct {
	store *generic.Store
}

var (
	_ rest.Storage             = (*FinalizeREST)(nil)
	_ rest.Updater             = (*FinalizeREST)(nil)
	_ rest.ResetFieldsStrategy = (*FinalizeREST)(nil)
)

// NewREST returns the namespaces resource (short name "ns") and its status
// and finalize subresources, on the storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*REST, *generic.StatusREST, *FinalizeREST, error) {
	newFunc := func() runtime.Object { return &corev1.Namespace{} }
	newList := func() runtime.Object { return &corev1.NamespaceList{} }
	s, destroy, err := opts.NewStorage(generic.StorageConfig{
		Resource:       Resource,
		StorageVersion: corev1.SchemeGroupVersion,
		Prefix:         generic.DefaultResourcePrefix(Resource),
		NewFunc:        newFunc,
		NewListFunc:    newList,
		GetAttrs:       GetAttrs,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	store := &generic.Store{
		NewFunc:                   newFunc,
		NewListFunc:               newList,
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: corev1.Resource("namespace"),
		StorageVersion:            corev1.SchemeGroupVersion,
		ResourceShortNames:        []string{"ns"},
		GetAttrs:                  GetAttrs,
		FieldLabels:               FieldLabels,
		NameValidator:             validation.ValidateNamespaceName,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		ReturnDeletedObject:       true,
		ShouldDeleteDuringUpdate:  shouldDeleteDuringUpdate,
		TableConvertor:            TableConvertor,
		Storage:                   s,
		DestroyFunc:               destroy,
		Logger:                    opts.Log(),
	}
	if err := store.Complete(); err != nil {
		return nil, nil, nil, fmt.Errorf("namespaces: %w", err)
	}
	status := generic.NewStatusREST(store, StatusStrategy)
	finalize := *store
	finalize.UpdateStrategy = FinalizeStrategy
	finalize.ResetFieldsStrategy = FinalizeStrategy
	finalize.DestroyFunc = nil
	return &REST{store: store}, status, &FinalizeREST{store: &finalize}, nil
}

// shouldDeleteDuringUpdate: a terminating namespace goes only once
// spec.finalizers is empty too.
func shouldDeleteDuringUpdate(_ context.Context, _ string, obj, _ runtime.Object) bool {
	ns, ok := obj.(*corev1.Namespace)
	return ok && len(ns.Spec.Finalizers) == 0
}

// Store returns the generic store behind the resource.
func (r *REST) Store() *generic.Store { return r.store }

// New implements rest.Storage.
func (r *REST) New() runtime.Object { return r.store.New() }

// Destroy implements rest.Storage.
func (r *REST) Destroy() { r.store.Destroy() }

// NamespaceScoped implements rest.Scoper: false.
func (r *REST) NamespaceScoped() bool { return r.store.NamespaceScoped() }

// GetSingularName implements rest.SingularNameProvider.
func (r *REST) GetSingularName() string { return r.store.GetSingularName() }

// ShortNames implements rest.ShortNamesProvider.
func (r *REST) ShortNames() []string { return r.store.ShortNames() }

// NewList implements rest.Lister.
func (r *REST) NewList() runtime.Object { return r.store.NewList() }

// Get implements rest.Getter.
func (r *REST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

// List implements rest.Lister.
func (r *REST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	return r.store.List(ctx, options)
}

// Watch implements rest.Watcher.
func (r *REST) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	return r.store.Watch(ctx, options)
}

// Create implements rest.Creater.
func (r *REST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	return r.store.Create(ctx, obj, createValidation, options)
}

// Update implements rest.Updater.
func (r *REST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}

// ConvertToTable implements rest.TableConvertor.
func (r *REST) ConvertToTable(ctx context.Context, object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, object, tableOptions)
}

// GetResetFields implements rest.ResetFieldsStrategy.
func (r *REST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

// REST is no rest.MayReturnFullObjectDeleter although Delete answers
// with the deleted namespace, as upstream's: its namespace REST wraps its
// store rather than embedding it, so kube-apiserver's OpenAPI documents
// say DELETE answers a Status, and kapi's say the same.

// Delete implements rest.GracefulDeleter with the namespace lifecycle
// (see the package doc). It reports true only when the namespace is gone.
func (r *REST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	if deleteValidation == nil {
		deleteValidation = rest.ValidateAllObjectFunc
	}
	if options == nil {
		options = metav1.NewDeleteOptions(0)
	}
	obj, err := r.store.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, false, err
	}
	ns := obj.(*corev1.Namespace)
	preconditions := storage.Preconditions{UID: &ns.UID}
	if p := options.Preconditions; p != nil {
		if p.UID != nil && *p.UID != ns.UID {
			return nil, false, apierrors.NewConflict(Resource, name, fmt.Errorf(
				"Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, ns.UID))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != ns.ResourceVersion {
			return nil, false, apierrors.NewConflict(Resource, name, fmt.Errorf(
				"Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, ns.ResourceVersion))
		}
		preconditions.ResourceVersion = p.ResourceVersion
	}
	if ns.DeletionTimestamp.IsZero() {
		out, err := r.markTerminating(ctx, name, options, &preconditions, deleteValidation, ns)
		return out, false, err
	}
	// Only an empty spec.finalizers lets the namespace go.
	if len(ns.Spec.Finalizers) != 0 {
		return ns, false, nil
	}
	opts := options.DeepCopy()
	if opts.Preconditions == nil {
		opts.Preconditions = &metav1.Preconditions{}
	}
	opts.Preconditions.UID = &ns.UID
	return r.store.Delete(ctx, name, deleteValidation, opts)
}

// markTerminating is the first delete of a namespace: deletionTimestamp,
// phase Terminating, and the orphan / foregroundDeletion finalizers as the
// options ask. A dry run computes the result and writes nothing.
func (r *REST) markTerminating(ctx context.Context, name string, options *metav1.DeleteOptions, preconditions *storage.Preconditions,
	deleteValidation rest.ValidateObjectFunc, current *corev1.Namespace) (runtime.Object, error) {
	mark := func(existing runtime.Object) (runtime.Object, error) {
		ns, ok := existing.(*corev1.Namespace)
		if !ok {
			return nil, errNotNamespace(existing)
		}
		if err := deleteValidation(ctx, ns); err != nil {
			return nil, err
		}
		if ns.DeletionTimestamp.IsZero() {
			now := metav1.Now()
			ns.DeletionTimestamp = &now
		}
		ns.Status.Phase = corev1.NamespaceTerminating
		ns.Finalizers = deletionFinalizers(ns.Finalizers, options)
		return ns, nil
	}
	if len(options.DryRun) > 0 {
		if err := checkPreconditions(preconditions, current); err != nil {
			return nil, apierrors.NewConflict(Resource, name, err)
		}
		return mark(current.DeepCopy())
	}
	key, err := r.store.KeyFunc(ctx, name)
	if err != nil {
		return nil, err
	}
	out := &corev1.Namespace{}
	if err := r.store.Storage.GuaranteedUpdate(ctx, key, out, false, preconditions, mark, nil); err != nil {
		return nil, generic.InterpretStorageError(err, Resource, name)
	}
	return out, nil
}

func checkPreconditions(p *storage.Preconditions, ns *corev1.Namespace) error {
	if p.UID != nil && *p.UID != ns.UID {
		return fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, ns.UID)
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != ns.ResourceVersion {
		return fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, ns.ResourceVersion)
	}
	return nil
}

// deletionFinalizers returns finalizers with the orphan and
// foregroundDeletion finalizers set as the options ask (orphanDependents
// first, then propagationPolicy; without either, as they are).
func deletionFinalizers(finalizers []string, options *metav1.DeleteOptions) []string {
	want := map[string]bool{
		metav1.FinalizerOrphanDependents: slices.Contains(finalizers, metav1.FinalizerOrphanDependents),
		metav1.FinalizerDeleteDependents: slices.Contains(finalizers, metav1.FinalizerDeleteDependents),
	}
	//nolint:staticcheck // the deprecated field still works, as in kube
	if o := options.OrphanDependents; o != nil {
		want[metav1.FinalizerOrphanDependents] = *o
		want[metav1.FinalizerDeleteDependents] = !*o
	} else if p := options.PropagationPolicy; p != nil {
		want[metav1.FinalizerOrphanDependents] = *p == metav1.DeletePropagationOrphan
		want[metav1.FinalizerDeleteDependents] = *p == metav1.DeletePropagationForeground
	}
	if want[metav1.FinalizerOrphanDependents] == slices.Contains(finalizers, metav1.FinalizerOrphanDependents) &&
		want[metav1.FinalizerDeleteDependents] == slices.Contains(finalizers, metav1.FinalizerDeleteDependents) {
		return finalizers
	}
	out := make([]string, 0, len(finalizers)+1)
	for _, f := range finalizers {
		if f == metav1.FinalizerOrphanDependents || f == metav1.FinalizerDeleteDependents {
			continue
		}
		out = append(out, f)
	}
	for _, f := range []string{metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents} {
		if want[f] {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// New implements rest.Storage.
func (r *FinalizeREST) New() runtime.Object { return r.store.New() }

// Destroy implements rest.Storage: the storage is the main resource's.
func (r *FinalizeREST) Destroy() {}

// Update implements rest.Updater: it changes spec.finalizers (and
// metadata), never the status, and never creates. Emptying spec.finalizers
// of a terminating namespace without metadata finalizers deletes it.
func (r *FinalizeREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// GetResetFields implements rest.ResetFieldsStrategy.
func (r *FinalizeREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

// StorageGroupVersion is the group-version objects are stored as (for
// discovery's storageVersionHash).
func (r *REST) StorageGroupVersion() schema.GroupVersion { return r.store.StorageVersion }
