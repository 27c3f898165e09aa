package event

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func errNotEvent(obj runtime.Object) error {
	return fmt.Errorf("not an event: %T", obj)
}

// ToEventsV1 returns in as an events.k8s.io/v1 Event (a new object; in is
// not changed): involvedObject is regarding, message is note, source,
// firstTimestamp, lastTimestamp and count are the deprecated* fields, the
// rest maps by name. TypeMeta is left empty for the encoder to fill.
func ToEventsV1(in *corev1.Event) *eventsv1.Event {
	c := in.DeepCopy()
	out := &eventsv1.Event{
		ObjectMeta:               c.ObjectMeta,
		EventTime:                c.EventTime,
		ReportingController:      c.ReportingController,
		ReportingInstance:        c.ReportingInstance,
		Action:                   c.Action,
		Reason:                   c.Reason,
		Regarding:                c.InvolvedObject,
		Related:                  c.Related,
		Note:                     c.Message,
		Type:                     c.Type,
		DeprecatedSource:         c.Source,
		DeprecatedFirstTimestamp: c.FirstTimestamp,
		DeprecatedLastTimestamp:  c.LastTimestamp,
		DeprecatedCount:          c.Count,
	}
	if c.Series != nil {
		out.Series = &eventsv1.EventSeries{Count: c.Series.Count, LastObservedTime: c.Series.LastObservedTime}
	}
	return out
}

// FromEventsV1 returns in as a core/v1 Event, the inverse of
// [ToEventsV1].
func FromEventsV1(in *eventsv1.Event) *corev1.Event {
	c := in.DeepCopy()
	out := &corev1.Event{
		ObjectMeta:          c.ObjectMeta,
		InvolvedObject:      c.Regarding,
		Reason:              c.Reason,
		Message:             c.Note,
		Source:              c.DeprecatedSource,
		FirstTimestamp:      c.DeprecatedFirstTimestamp,
		LastTimestamp:       c.DeprecatedLastTimestamp,
		Count:               c.DeprecatedCount,
		Type:                c.Type,
		EventTime:           c.EventTime,
		Action:              c.Action,
		Related:             c.Related,
		ReportingController: c.ReportingController,
		ReportingInstance:   c.ReportingInstance,
	}
	if c.Series != nil {
		out.Series = &corev1.EventSeries{Count: c.Series.Count, LastObservedTime: c.Series.LastObservedTime}
	}
	return out
}

// ToEventsV1List converts a core/v1 EventList (list metadata and items).
func ToEventsV1List(in *corev1.EventList) *eventsv1.EventList {
	out := &eventsv1.EventList{ListMeta: *in.ListMeta.DeepCopy()}
	if in.Items != nil {
		out.Items = make([]eventsv1.Event, len(in.Items))
		for i := range in.Items {
			out.Items[i] = *ToEventsV1(&in.Items[i])
		}
	}
	return out
}

// FromEventsV1List converts an events.k8s.io/v1 EventList.
func FromEventsV1List(in *eventsv1.EventList) *corev1.EventList {
	out := &corev1.EventList{ListMeta: *in.ListMeta.DeepCopy()}
	if in.Items != nil {
		out.Items = make([]corev1.Event, len(in.Items))
		for i := range in.Items {
			out.Items[i] = *FromEventsV1(&in.Items[i])
		}
	}
	return out
}

// toEventsV1Object converts core/v1 events and event lists and passes
// anything else (a Status, nil) through.
func toEventsV1Object(obj runtime.Object) runtime.Object {
	switch o := obj.(type) {
	case *corev1.Event:
		return ToEventsV1(o)
	case *corev1.EventList:
		return ToEventsV1List(o)
	default:
		return obj
	}
}
