package event

import (
	"context"
	"fmt"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// EventsV1REST serves events.k8s.io/v1 events from the core/v1 events
// store: objects are converted on the way in and out, field selectors in
// events.k8s.io names (regarding.kind, reportingController, ...) are
// mapped to the stored fields, and admission checks see events.k8s.io/v1
// objects. It implements the same verbs as the store.
type EventsV1REST struct {
	store *generic.Store
}

var (
	_ rest.Storage              = (*EventsV1REST)(nil)
	_ rest.Scoper               = (*EventsV1REST)(nil)
	_ rest.Getter               = (*EventsV1REST)(nil)
	_ rest.Lister               = (*EventsV1REST)(nil)
	_ rest.Watcher              = (*EventsV1REST)(nil)
	_ rest.Creater              = (*EventsV1REST)(nil)
	_ rest.Updater              = (*EventsV1REST)(nil)
	_ rest.Patcher              = (*EventsV1REST)(nil)
	_ rest.GracefulDeleter      = (*EventsV1REST)(nil)
	_ rest.CollectionDeleter    = (*EventsV1REST)(nil)
	_ rest.TableConvertor       = (*EventsV1REST)(nil)
	_ rest.SingularNameProvider = (*EventsV1REST)(nil)
	_ rest.ShortNamesProvider   = (*EventsV1REST)(nil)
)

// NewEventsV1REST serves events.k8s.io/v1 from core, the store [NewREST]
// returned. Destroying it does nothing: core owns the storage.
func NewEventsV1REST(core *generic.Store) *EventsV1REST {
	return &EventsV1REST{store: core}
}

// New implements rest.Storage.
func (r *EventsV1REST) New() runtime.Object { return &eventsv1.Event{} }

// NewList implements rest.Lister.
func (r *EventsV1REST) NewList() runtime.Object { return &eventsv1.EventList{} }

// Destroy implements rest.Storage: nothing to release.
func (r *EventsV1REST) Destroy() {}

// NamespaceScoped implements rest.Scoper.
func (r *EventsV1REST) NamespaceScoped() bool { return true }

// GetSingularName implements rest.SingularNameProvider.
func (r *EventsV1REST) GetSingularName() string { return "event" }

// ShortNames implements rest.ShortNamesProvider.
func (r *EventsV1REST) ShortNames() []string { return []string{"ev"} }

// Get implements rest.Getter.
func (r *EventsV1REST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.store.Get(ctx, name, options)
	if err != nil {
		return nil, err
	}
	return toEventsV1Object(obj), nil
}

// List implements rest.Lister.
func (r *EventsV1REST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	options, err := mapListOptions(options)
	if err != nil {
		return nil, err
	}
	obj, err := r.store.List(ctx, options)
	if err != nil {
		return nil, err
	}
	return toEventsV1Object(obj), nil
}

// Watch implements rest.Watcher: the store's watch with each event's
// object converted (error Statuses pass through).
func (r *EventsV1REST) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	options, err := mapListOptions(options)
	if err != nil {
		return nil, err
	}
	w, err := r.store.Watch(ctx, options)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(in watch.Event) (watch.Event, bool) {
		in.Object = toEventsV1Object(in.Object)
		return in, true
	}), nil
}

// Create implements rest.Creater.
func (r *EventsV1REST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	e, ok := obj.(*eventsv1.Event)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not an events.k8s.io/v1 Event: %T", obj))
	}
	out, err := r.store.Create(ctx, FromEventsV1(e), wrapValidation(createValidation), options)
	if err != nil {
		return nil, err
	}
	return toEventsV1Object(out), nil
}

// Update implements rest.Updater.
func (r *EventsV1REST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	var uv rest.ValidateObjectUpdateFunc
	if updateValidation != nil {
		uv = func(ctx context.Context, obj, old runtime.Object) error {
			return updateValidation(ctx, toEventsV1Object(obj), toEventsV1Object(old))
		}
	}
	out, created, err := r.store.Update(ctx, name, v1ObjectInfo{objInfo}, wrapValidation(createValidation), uv, forceAllowCreate, options)
	if err != nil {
		return nil, false, err
	}
	return toEventsV1Object(out), created, nil
}

// Delete implements rest.GracefulDeleter.
func (r *EventsV1REST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	out, deleted, err := r.store.Delete(ctx, name, wrapValidation(deleteValidation), options)
	if err != nil {
		return nil, false, err
	}
	return toEventsV1Object(out), deleted, nil
}

// DeleteCollection implements rest.CollectionDeleter.
func (r *EventsV1REST) DeleteCollection(ctx context.Context, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions,
	listOptions *metainternalversion.ListOptions) (runtime.Object, error) {
	listOptions, err := mapListOptions(listOptions)
	if err != nil {
		return nil, err
	}
	out, err := r.store.DeleteCollection(ctx, wrapValidation(deleteValidation), options, listOptions)
	if err != nil {
		return nil, err
	}
	return toEventsV1Object(out), nil
}

// ConvertToTable implements rest.TableConvertor.
func (r *EventsV1REST) ConvertToTable(ctx context.Context, object, tableOptions runtime.Object) (*metav1.Table, error) {
	return TableConvertor.ConvertToTable(ctx, object, tableOptions)
}

// wrapValidation makes an admission check of events.k8s.io objects
// accept the stored core/v1 ones.
func wrapValidation(f rest.ValidateObjectFunc) rest.ValidateObjectFunc {
	if f == nil {
		return nil
	}
	return func(ctx context.Context, obj runtime.Object) error {
		return f(ctx, toEventsV1Object(obj))
	}
}

// mapListOptions returns options with field selector labels in
// events.k8s.io names mapped to the stored ones (others unchanged: the
// store rejects unknown ones).
func mapListOptions(options *metainternalversion.ListOptions) (*metainternalversion.ListOptions, error) {
	if options == nil || options.FieldSelector == nil || options.FieldSelector.Empty() {
		return options, nil
	}
	sel, err := options.FieldSelector.Transform(func(label, value string) (string, string, error) {
		if mapped, ok := eventsV1FieldLabels[label]; ok {
			return mapped, value, nil
		}
		return label, value, nil
	})
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	out := options.DeepCopy()
	out.FieldSelector = sel
	return out, nil
}

// v1ObjectInfo computes a core/v1 update from an events.k8s.io/v1 one.
type v1ObjectInfo struct {
	inner rest.UpdatedObjectInfo
}

func (i v1ObjectInfo) Preconditions() *metav1.Preconditions { return i.inner.Preconditions() }

func (i v1ObjectInfo) UpdatedObject(ctx context.Context, old runtime.Object) (runtime.Object, error) {
	obj, err := i.inner.UpdatedObject(ctx, toEventsV1Object(old))
	if err != nil {
		return nil, err
	}
	e, ok := obj.(*eventsv1.Event)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not an events.k8s.io/v1 Event: %T", obj))
	}
	return FromEventsV1(e), nil
}

// StorageGroupVersion is the group-version objects are stored as (for
// discovery's storageVersionHash).
func (r *EventsV1REST) StorageGroupVersion() schema.GroupVersion { return r.store.StorageVersion }

// DeleteCorrupt implements rest.CorruptObjectDeleter: the events store's
// (events.k8s.io events are the core events' keys), as upstream's
// events.k8s.io storage is a generic store.
func (r *EventsV1REST) DeleteCorrupt(ctx context.Context, name string, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	return r.store.DeleteCorrupt(ctx, name, options)
}

// DeletesCorruptObjects implements rest.CorruptObjectDeleter.
func (r *EventsV1REST) DeletesCorruptObjects() bool { return true }
