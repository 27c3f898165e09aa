package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage"
)

// Resource is the resource served.
var Resource = corev1.Resource("services")

// maxGenerateNameAttempts is how many generated names a create tries (as
// the generic store).
const maxGenerateNameAttempts = 8

// REST is the services resource: the generic store with ClusterIP and
// NodePort allocation around its writes.
type REST struct {
	store     *generic.Store
	alloc     *Allocators
	endpoints rest.GracefulDeleter
	logger    *slog.Logger
}

var (
	_ rest.Storage                    = (*REST)(nil)
	_ rest.Scoper                     = (*REST)(nil)
	_ rest.Getter                     = (*REST)(nil)
	_ rest.Lister                     = (*REST)(nil)
	_ rest.Watcher                    = (*REST)(nil)
	_ rest.Creater                    = (*REST)(nil)
	_ rest.Updater                    = (*REST)(nil)
	_ rest.Patcher                    = (*REST)(nil)
	_ rest.GracefulDeleter            = (*REST)(nil)
	_ rest.MayReturnFullObjectDeleter = (*REST)(nil)
	_ rest.CollectionDeleter          = (*REST)(nil)
	_ rest.TableConvertor             = (*REST)(nil)
	_ rest.SingularNameProvider       = (*REST)(nil)
	_ rest.ShortNamesProvider         = (*REST)(nil)
	_ rest.CategoriesProvider         = (*REST)(nil)
	_ rest.ResetFieldsStrategy        = (*REST)(nil)
)

// Config is what the services resource needs besides registry options.
type Config struct {
	// Allocators hand out ClusterIPs and NodePorts. Both are required.
	Allocators Allocators
	// Endpoints, if set, is the endpoints resource: deleting a service
	// deletes the Endpoints of the same name, as kube does (so that a new
	// service of that name never sees stale endpoints).
	Endpoints rest.GracefulDeleter
}

// NewREST returns the services resource (short name "svc", category
// "all") and its status subresource, on the storage opts makes for it.
func NewREST(opts generic.RESTOptions, c Config) (*REST, *generic.StatusREST, error) {
	if c.Allocators.IPs == nil || c.Allocators.Ports == nil {
		return nil, nil, errors.New("services: the IP and port allocators are required")
	}
	store, err := generic.NewStore(opts, corev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &corev1.Service{} },
		NewListFunc:               func() runtime.Object { return &corev1.ServiceList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: corev1.Resource("service"),
		ResourceShortNames:        []string{"svc"},
		ResourceCategories:        []string{"all"},
		GetAttrs:                  GetAttrs,
		FieldLabels:               FieldLabels,
		NameValidator:             validation.ValidateServiceName,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		ReturnDeletedObject:       true,
		TableConvertor:            TableConvertor,
	})
	if err != nil {
		return nil, nil, err
	}
	alloc := c.Allocators
	r := &REST{store: store, alloc: &alloc, endpoints: c.Endpoints, logger: opts.Log().With("resource", "services")}
	return r, generic.NewStatusREST(store, StatusStrategy), nil
}

// Store returns the generic store behind the resource (reads only: writes
// through it bypass allocation).
func (r *REST) Store() *generic.Store { return r.store }

// New implements rest.Storage.
func (r *REST) New() runtime.Object { return r.store.New() }

// Destroy implements rest.Storage.
func (r *REST) Destroy() { r.store.Destroy() }

// NamespaceScoped implements rest.Scoper: true.
func (r *REST) NamespaceScoped() bool { return true }

// GetSingularName implements rest.SingularNameProvider.
func (r *REST) GetSingularName() string { return r.store.GetSingularName() }

// ShortNames implements rest.ShortNamesProvider: svc.
func (r *REST) ShortNames() []string { return r.store.ShortNames() }

// Categories implements rest.CategoriesProvider: all.
func (r *REST) Categories() []string { return r.store.Categories() }

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

// ConvertToTable implements rest.TableConvertor.
func (r *REST) ConvertToTable(ctx context.Context, object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, object, tableOptions)
}

// GetResetFields implements rest.ResetFieldsStrategy.
func (r *REST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

func (r *REST) newTxn(dryRun bool) *txn {
	return &txn{a: r.alloc, dryRun: dryRun, logger: r.logger}
}

// Create implements rest.Creater: defaults, allocation, then the store's
// create; the allocations are released if the create fails. A generated
// name is chosen here (the allocations record their owner), retried when
// taken.
func (r *REST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a Service: %T", obj))
	}
	if options == nil {
		options = &metav1.CreateOptions{}
	}
	generate := svc.Name == "" && svc.GenerateName != ""
	attempts := 1
	if generate {
		attempts = maxGenerateNameAttempts
	}
	var (
		out runtime.Object
		err error
	)
	for range attempts {
		try := svc.DeepCopy()
		if generate {
			try.Name = r.store.GenerateNameFunc(try.GenerateName)
		}
		out, err = r.create(ctx, try, createValidation, options)
		if err == nil || !generate || !apierrors.IsAlreadyExists(err) {
			break
		}
	}
	return out, err
}

func (r *REST) create(ctx context.Context, svc *corev1.Service, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	if svc.Namespace == "" {
		svc.Namespace = request.NamespaceFrom(ctx)
	}
	SetDefaults(svc)
	normalizeClusterIPs(svc, nil)
	t := r.newTxn(len(options.DryRun) > 0)
	if err := r.alloc.allocateCreate(ctx, t, svc); err != nil {
		t.revert(ctx)
		return nil, err
	}
	out, err := r.store.Create(ctx, svc, createValidation, options)
	if err != nil {
		t.revert(ctx)
		return nil, err
	}
	return out, nil
}

// Update implements rest.Updater: the update (or create, for a PUT of a
// missing service) allocates what the new spec needs; on success the
// values it no longer uses are released, on failure what it allocated.
func (r *REST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	if options == nil {
		options = &metav1.UpdateOptions{}
	}
	u := &allocatingUpdate{UpdatedObjectInfo: objInfo, r: r, t: r.newTxn(len(options.DryRun) > 0)}
	out, created, err := r.store.Update(ctx, name, u, createValidation, updateValidation, forceAllowCreate, options)
	if err != nil {
		u.t.revert(ctx)
		return nil, false, err
	}
	// An update that removed the last finalizer of a deleted service
	// deleted it.
	if svc, ok := out.(*corev1.Service); ok && svc.DeletionTimestamp != nil && len(svc.Finalizers) == 0 {
		r.afterDelete(ctx, svc, u.t.dryRun)
	}
	u.t.commit(ctx)
	return out, created, nil
}

// allocatingUpdate wraps an update's UpdatedObjectInfo: each computation
// of the new object (the storage may retry it) prepares it and allocates
// for it, after releasing what an earlier try allocated.
type allocatingUpdate struct {
	rest.UpdatedObjectInfo
	r *REST
	t *txn
}

func (u *allocatingUpdate) UpdatedObject(ctx context.Context, existing runtime.Object) (runtime.Object, error) {
	u.t.revert(ctx)
	u.t.releaseIPs, u.t.releasePorts = nil, nil
	obj, err := u.UpdatedObjectInfo.UpdatedObject(ctx, existing)
	if err != nil {
		return nil, err
	}
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a Service: %T", obj))
	}
	old, ok := existing.(*corev1.Service)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("stored object is not a Service: %T", existing))
	}
	rv, err := storage.ObjectResourceVersion(old)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if svc.Namespace == "" {
		svc.Namespace = request.NamespaceFrom(ctx)
	}
	if svc.Name == "" {
		svc.Name = old.Name
	}
	SetDefaults(svc)
	if rv == 0 {
		// A PUT creating the service.
		normalizeClusterIPs(svc, nil)
		if err := u.r.alloc.allocateCreate(ctx, u.t, svc); err != nil {
			u.t.revert(ctx)
			return nil, err
		}
		return svc, nil
	}
	patchAllocatedValues(svc, old)
	normalizeClusterIPs(svc, old)
	dropTypeDependentFields(svc, old)
	if err := u.r.alloc.allocateUpdate(ctx, u.t, svc, old); err != nil {
		u.t.revert(ctx)
		return nil, err
	}
	return svc, nil
}

// DeleteReturnsDeletedObject reports whether Delete answers with the
// deleted object (it does, as upstream's).
func (r *REST) DeleteReturnsDeletedObject() bool { return r.store.DeleteReturnsDeletedObject() }

// DeleteCorrupt implements rest.CorruptObjectDeleter: the generic store's,
// as upstream's service REST embeds its store (no IP or endpoints release:
// the object cannot be read).
func (r *REST) DeleteCorrupt(ctx context.Context, name string, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	return r.store.DeleteCorrupt(ctx, name, options)
}

// DeletesCorruptObjects implements rest.CorruptObjectDeleter.
func (r *REST) DeletesCorruptObjects() bool { return true }

// Delete implements rest.GracefulDeleter: once the service is gone its
// ClusterIPs and NodePorts are released and its Endpoints deleted.
func (r *REST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	out, deleted, err := r.store.Delete(ctx, name, deleteValidation, options)
	if err != nil || !deleted {
		return out, deleted, err
	}
	if svc, ok := out.(*corev1.Service); ok {
		r.afterDelete(ctx, svc, options != nil && len(options.DryRun) > 0)
	}
	return out, deleted, nil
}

// DeleteCollection implements rest.CollectionDeleter, as upstream's
// services do: every selected Service is deleted as by Delete, so each
// one's ClusterIPs and NodePorts are released and its Endpoints deleted.
func (r *REST) DeleteCollection(ctx context.Context, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions,
	listOptions *metainternalversion.ListOptions) (runtime.Object, error) {
	return r.store.DeleteCollectionWith(ctx, r, deleteValidation, options, listOptions)
}

// afterDelete releases what svc held and deletes its Endpoints.
func (r *REST) afterDelete(ctx context.Context, svc *corev1.Service, dryRun bool) {
	if dryRun {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if r.endpoints != nil {
		epCtx := request.WithNamespace(ctx, svc.Namespace)
		if _, _, err := r.endpoints.Delete(epCtx, svc.Name, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			r.logger.Error("delete service endpoints", "namespace", svc.Namespace, "name", svc.Name, "err", err)
		}
	}
	ips, ports := allocatedResources(svc)
	t := r.newTxn(false)
	t.release(ctx, ips, ports, "service deleted")
}

// StorageGroupVersion is the group-version objects are stored as (for
// discovery's storageVersionHash).
func (r *REST) StorageGroupVersion() schema.GroupVersion { return r.store.StorageVersion }
