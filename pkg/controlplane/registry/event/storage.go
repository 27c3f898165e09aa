package event

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the core/v1 resource; EventsV1Resource the events.k8s.io
// one. Both are stored under /events.
var (
	Resource         = corev1.Resource("events")
	EventsV1Resource = eventsv1.Resource("events")
)

// NewREST returns the completed store of core/v1 events (short name
// "ev"), on the storage opts makes for them. Serve events.k8s.io/v1 with
// [NewEventsV1REST] on the returned store.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	newFunc := func() runtime.Object { return &corev1.Event{} }
	newList := func() runtime.Object { return &corev1.EventList{} }
	s, destroy, err := opts.NewStorage(generic.StorageConfig{
		Resource:       Resource,
		StorageVersion: corev1.SchemeGroupVersion,
		Prefix:         generic.DefaultResourcePrefix(Resource),
		NewFunc:        newFunc,
		NewListFunc:    newList,
		GetAttrs:       GetAttrs,
	})
	if err != nil {
		return nil, err
	}
	store := &generic.Store{
		NewFunc:                   newFunc,
		NewListFunc:               newList,
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: corev1.Resource("event"),
		StorageVersion:            corev1.SchemeGroupVersion,
		ResourceShortNames:        []string{"ev"},
		GetAttrs:                  GetAttrs,
		FieldLabels:               FieldLabels,
		// Core events only need names usable in a path; events.k8s.io/v1
		// writes check DNS-1123 subdomain names in the strategy.
		NameValidator:  generic.ValidatePathSegmentName,
		CreateStrategy: Strategy,
		UpdateStrategy: Strategy,
		DeleteStrategy: Strategy,
		TableConvertor: TableConvertor,
		Storage:        s,
		DestroyFunc:    destroy,
		Logger:         opts.Log(),
	}
	if err := store.Complete(); err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	return store, nil
}
