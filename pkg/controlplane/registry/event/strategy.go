package event

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// strategy is events' behaviour: namespaced, created by PUT too,
// unconditional updates allowed, deleted at once without garbage
// collection finalizers.
type strategy struct{}

// Strategy is the create, update and delete strategy of events.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy                  = Strategy
	_ generic.UpdateStrategy                  = Strategy
	_ generic.DeleteStrategy                  = Strategy
	_ generic.GarbageCollectionDeleteStrategy = Strategy
)

func (strategy) NamespaceScoped() bool                                            { return true }
func (strategy) PrepareForCreate(context.Context, runtime.Object)                 {}
func (strategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

// Validate checks a new event with the rules of the request's version.
func (strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateEventCreateFields(obj.(*corev1.Event), requestGroupVersion(ctx))
}

// ValidateUpdate checks an update with the rules of the request's version.
func (strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateEventUpdateFields(obj.(*corev1.Event), old.(*corev1.Event), requestGroupVersion(ctx))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return true }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// CheckGracefulDelete implements generic.DeleteStrategy: never graceful.
func (strategy) CheckGracefulDelete(context.Context, runtime.Object, *metav1.DeleteOptions) bool {
	return false
}

// DefaultGarbageCollectionPolicy: events never get the orphan or
// foregroundDeletion finalizers.
func (strategy) DefaultGarbageCollectionPolicy(context.Context) generic.GarbageCollectionPolicy {
	return generic.Unsupported
}

// requestGroupVersion is the group-version of the request on ctx, or the
// zero one (which gets the strict validation, as upstream).
func requestGroupVersion(ctx context.Context) schema.GroupVersion {
	if info, ok := request.RequestInfoFrom(ctx); ok {
		return schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
	}
	return schema.GroupVersion{}
}

// FieldLabels are the fields events can be selected by (core/v1 names),
// besides metadata.name and metadata.namespace.
var FieldLabels = []string{
	"involvedObject.kind",
	"involvedObject.namespace",
	"involvedObject.name",
	"involvedObject.uid",
	"involvedObject.apiVersion",
	"involvedObject.resourceVersion",
	"involvedObject.fieldPath",
	"reason",
	"reportingComponent",
	"source",
	"type",
}

// FieldLabelConversion accepts the field selector labels of core/v1
// events, for the scheme's AddFieldLabelConversionFunc.
var FieldLabelConversion = generic.FieldLabelConversion(append([]string{"metadata.namespace", "metadata.name"}, FieldLabels...)...)

// eventsV1FieldLabels maps events.k8s.io/v1 field selector labels to the
// stored (core/v1) fields: upstream's AddFieldLabelConversionsForEvent
// (pkg/apis/events/v1/conversion.go, v1.37.2), which has no "source".
var eventsV1FieldLabels = map[string]string{
	"reason":                    "reason",
	"regarding.kind":            "involvedObject.kind",
	"regarding.namespace":       "involvedObject.namespace",
	"regarding.name":            "involvedObject.name",
	"regarding.uid":             "involvedObject.uid",
	"regarding.apiVersion":      "involvedObject.apiVersion",
	"regarding.resourceVersion": "involvedObject.resourceVersion",
	"regarding.fieldPath":       "involvedObject.fieldPath",
	"reportingController":       "reportingComponent",
	"type":                      "type",
	"metadata.namespace":        "metadata.namespace",
	"metadata.name":             "metadata.name",
}

// EventsV1FieldLabelConversion converts the field selector labels of
// events.k8s.io/v1 events to the stored fields (regarding.kind is
// involvedObject.kind, ...), for the scheme's AddFieldLabelConversionFunc.
func EventsV1FieldLabelConversion(label, value string) (string, string, error) {
	mapped, ok := eventsV1FieldLabels[label]
	if !ok {
		return generic.FieldLabelConversion()(label, value)
	}
	return mapped, value, nil
}

// GetAttrs returns an event's labels and selectable fields.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	e, ok := obj.(*corev1.Event)
	if !ok {
		return nil, nil, errNotEvent(obj)
	}
	return labels.Set(e.Labels), fields.Set{
		"metadata.name":                  e.Name,
		"metadata.namespace":             e.Namespace,
		"involvedObject.kind":            e.InvolvedObject.Kind,
		"involvedObject.namespace":       e.InvolvedObject.Namespace,
		"involvedObject.name":            e.InvolvedObject.Name,
		"involvedObject.uid":             string(e.InvolvedObject.UID),
		"involvedObject.apiVersion":      e.InvolvedObject.APIVersion,
		"involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath":       e.InvolvedObject.FieldPath,
		"reason":                         e.Reason,
		"reportingComponent":             e.ReportingController,
		"source":                         e.Source.Component,
		"type":                           e.Type,
	}, nil
}

// AddFieldLabelConversions registers the field label conversions of
// core/v1 Event ([FieldLabelConversion]) and events.k8s.io/v1 Event
// ([EventsV1FieldLabelConversion]) on s (the scheme the REST handlers
// convert field selectors with).
func AddFieldLabelConversions(s *runtime.Scheme) error {
	if err := s.AddFieldLabelConversionFunc(corev1.SchemeGroupVersion.WithKind("Event"), FieldLabelConversion); err != nil {
		return err
	}
	return s.AddFieldLabelConversionFunc(eventsv1.SchemeGroupVersion.WithKind("Event"), EventsV1FieldLabelConversion)
}
