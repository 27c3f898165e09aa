package horizontalpodautoscaler

import (
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	conversion "github.com/kapi-dev/kapi/pkg/api/conversion/autoscaling"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// V1REST serves autoscaling/v1 horizontalpodautoscalers from the v2 store:
// objects are converted on the way in and out, and admission checks see
// v1 objects. It implements the store's verbs.
type V1REST struct {
	store *generic.Store
}

var (
	_ rest.Storage              = (*V1REST)(nil)
	_ rest.Scoper               = (*V1REST)(nil)
	_ rest.Getter               = (*V1REST)(nil)
	_ rest.Lister               = (*V1REST)(nil)
	_ rest.Watcher              = (*V1REST)(nil)
	_ rest.Creater              = (*V1REST)(nil)
	_ rest.Updater              = (*V1REST)(nil)
	_ rest.Patcher              = (*V1REST)(nil)
	_ rest.GracefulDeleter      = (*V1REST)(nil)
	_ rest.CollectionDeleter    = (*V1REST)(nil)
	_ rest.TableConvertor       = (*V1REST)(nil)
	_ rest.SingularNameProvider = (*V1REST)(nil)
	_ rest.ShortNamesProvider   = (*V1REST)(nil)
	_ rest.CategoriesProvider   = (*V1REST)(nil)
	_ rest.ResetFieldsStrategy  = (*V1REST)(nil)
)

// NewV1REST serves autoscaling/v1 from v2, the store [NewREST] returned.
// Destroying it does nothing: v2 owns the storage.
func NewV1REST(v2 *generic.Store) *V1REST { return &V1REST{store: v2} }

// New implements rest.Storage.
func (r *V1REST) New() runtime.Object { return &autoscalingv1.HorizontalPodAutoscaler{} }

// NewList implements rest.Lister.
func (r *V1REST) NewList() runtime.Object { return &autoscalingv1.HorizontalPodAutoscalerList{} }

// Destroy implements rest.Storage: nothing to release.
func (r *V1REST) Destroy() {}

// NamespaceScoped implements rest.Scoper.
func (r *V1REST) NamespaceScoped() bool { return true }

// GetSingularName implements rest.SingularNameProvider.
func (r *V1REST) GetSingularName() string { return r.store.GetSingularName() }

// ShortNames implements rest.ShortNamesProvider.
func (r *V1REST) ShortNames() []string { return r.store.ShortNames() }

// Categories implements rest.CategoriesProvider.
func (r *V1REST) Categories() []string { return r.store.Categories() }

// GetResetFields implements rest.ResetFieldsStrategy.
func (r *V1REST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

// Get implements rest.Getter.
func (r *V1REST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.store.Get(ctx, name, options)
	if err != nil {
		return nil, err
	}
	return toV1(obj)
}

// List implements rest.Lister.
func (r *V1REST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	obj, err := r.store.List(ctx, options)
	if err != nil {
		return nil, err
	}
	return toV1(obj)
}

// Watch implements rest.Watcher: the store's watch with each object
// converted (error Statuses pass through).
func (r *V1REST) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	w, err := r.store.Watch(ctx, options)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(in watch.Event) (watch.Event, bool) {
		if obj, err := toV1(in.Object); err == nil {
			in.Object = obj
		} else {
			in = watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus}
		}
		return in, true
	}), nil
}

// Create implements rest.Creater.
func (r *V1REST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	in, err := fromV1(obj)
	if err != nil {
		return nil, err
	}
	out, err := r.store.Create(ctx, in, v1Validation(createValidation), options)
	if err != nil {
		return nil, err
	}
	return toV1(out)
}

// Update implements rest.Updater.
func (r *V1REST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	out, created, err := r.store.Update(ctx, name, v1ObjectInfo{objInfo}, v1Validation(createValidation), v1UpdateValidation(updateValidation), forceAllowCreate, options)
	if err != nil {
		return nil, false, err
	}
	v1, err := toV1(out)
	return v1, created, err
}

// Delete implements rest.GracefulDeleter.
func (r *V1REST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	out, deleted, err := r.store.Delete(ctx, name, v1Validation(deleteValidation), options)
	if err != nil {
		return nil, false, err
	}
	v1, err := toV1(out)
	return v1, deleted, err
}

// DeleteCollection implements rest.CollectionDeleter.
func (r *V1REST) DeleteCollection(ctx context.Context, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions,
	listOptions *metainternalversion.ListOptions) (runtime.Object, error) {
	out, err := r.store.DeleteCollection(ctx, v1Validation(deleteValidation), options, listOptions)
	if err != nil {
		return nil, err
	}
	return toV1(out)
}

// ConvertToTable implements rest.TableConvertor: rows are rendered from
// the v1 objects converted back to v2. (Upstream renders its internal
// object: when a v2 autoscaler lists its CPU utilization metric before
// others, v1 cannot tell where it was, and TARGETS lists it last here.)
func (r *V1REST) ConvertToTable(ctx context.Context, object, tableOptions runtime.Object) (*metav1.Table, error) {
	return TableConvertor.ConvertToTable(ctx, object, tableOptions)
}

// V1StatusREST serves autoscaling/v1 horizontalpodautoscalers/status from
// the v2 status subresource.
type V1StatusREST struct {
	status *generic.StatusREST
}

var (
	_ rest.Storage             = (*V1StatusREST)(nil)
	_ rest.Getter              = (*V1StatusREST)(nil)
	_ rest.Updater             = (*V1StatusREST)(nil)
	_ rest.Patcher             = (*V1StatusREST)(nil)
	_ rest.TableConvertor      = (*V1StatusREST)(nil)
	_ rest.ResetFieldsStrategy = (*V1StatusREST)(nil)
)

// NewV1StatusREST serves autoscaling/v1 status from v2's.
func NewV1StatusREST(v2 *generic.StatusREST) *V1StatusREST { return &V1StatusREST{status: v2} }

// New implements rest.Storage.
func (r *V1StatusREST) New() runtime.Object { return &autoscalingv1.HorizontalPodAutoscaler{} }

// Destroy implements rest.Storage: nothing to release.
func (r *V1StatusREST) Destroy() {}

// GetResetFields implements rest.ResetFieldsStrategy.
func (r *V1StatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.status.GetResetFields()
}

// Get implements rest.Getter.
func (r *V1StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.status.Get(ctx, name, options)
	if err != nil {
		return nil, err
	}
	return toV1(obj)
}

// Update implements rest.Updater.
func (r *V1StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	out, created, err := r.status.Update(ctx, name, v1ObjectInfo{objInfo}, v1Validation(createValidation), v1UpdateValidation(updateValidation), forceAllowCreate, options)
	if err != nil {
		return nil, false, err
	}
	v1, err := toV1(out)
	return v1, created, err
}

// ConvertToTable implements rest.TableConvertor.
func (r *V1StatusREST) ConvertToTable(ctx context.Context, object, tableOptions runtime.Object) (*metav1.Table, error) {
	return TableConvertor.ConvertToTable(ctx, object, tableOptions)
}

// toV1 converts a stored object or list (or passes a Status through).
func toV1(obj runtime.Object) (runtime.Object, error) {
	switch o := obj.(type) {
	case *autoscalingv2.HorizontalPodAutoscaler:
		out, err := conversion.ToV1(o)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		return out, nil
	case *autoscalingv2.HorizontalPodAutoscalerList:
		out := &autoscalingv1.HorizontalPodAutoscalerList{ListMeta: *o.ListMeta.DeepCopy()}
		if o.Items != nil {
			out.Items = make([]autoscalingv1.HorizontalPodAutoscaler, len(o.Items))
		}
		for i := range o.Items {
			item, err := conversion.ToV1(&o.Items[i])
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			out.Items[i] = *item
		}
		return out, nil
	}
	return obj, nil
}

// fromV1 converts a v1 request object to the stored version.
func fromV1(obj runtime.Object) (*autoscalingv2.HorizontalPodAutoscaler, error) {
	in, ok := obj.(*autoscalingv1.HorizontalPodAutoscaler)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not an autoscaling/v1 HorizontalPodAutoscaler: %T", obj))
	}
	out, err := conversion.FromV1(in)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return out, nil
}

// v1Validation makes an admission check of v1 objects accept the stored
// v2 ones.
func v1Validation(f rest.ValidateObjectFunc) rest.ValidateObjectFunc {
	if f == nil {
		return nil
	}
	return func(ctx context.Context, obj runtime.Object) error {
		v1, err := toV1(obj)
		if err != nil {
			return err
		}
		return f(ctx, v1)
	}
}

func v1UpdateValidation(f rest.ValidateObjectUpdateFunc) rest.ValidateObjectUpdateFunc {
	if f == nil {
		return nil
	}
	return func(ctx context.Context, obj, old runtime.Object) error {
		v1, err := toV1(obj)
		if err != nil {
			return err
		}
		oldV1, err := toV1(old)
		if err != nil {
			return err
		}
		return f(ctx, v1, oldV1)
	}
}

// v1ObjectInfo computes the stored update from a v1 one.
type v1ObjectInfo struct {
	inner rest.UpdatedObjectInfo
}

func (i v1ObjectInfo) Preconditions() *metav1.Preconditions { return i.inner.Preconditions() }

func (i v1ObjectInfo) UpdatedObject(ctx context.Context, old runtime.Object) (runtime.Object, error) {
	var oldV1 runtime.Object
	if old != nil && !isNil(old) {
		converted, err := toV1(old)
		if err != nil {
			return nil, err
		}
		oldV1 = converted
	}
	obj, err := i.inner.UpdatedObject(ctx, oldV1)
	if err != nil {
		return nil, err
	}
	return fromV1(obj)
}

// isNil reports a typed nil object (the store may pass one for a missing
// object).
func isNil(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	return err != nil || m == nil
}

// StorageGroupVersion is the group-version objects are stored as (for
// discovery's storageVersionHash).
func (r *V1REST) StorageGroupVersion() schema.GroupVersion { return r.store.StorageVersion }
