package event

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func fullCoreEvent() *corev1.Event {
	ts := metav1.NewTime(time.Unix(1700000000, 0))
	mt := metav1.NewMicroTime(time.Unix(1700000001, 5000))
	return &corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: "pod.1", Namespace: "ns", Labels: map[string]string{"a": "b"}, ResourceVersion: "9"},
		InvolvedObject:      corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "pod", UID: "u1", APIVersion: "v1", ResourceVersion: "3", FieldPath: "spec.containers{c}"},
		Reason:              "Started",
		Message:             "started container",
		Source:              corev1.EventSource{Component: "kubelet", Host: "node-1"},
		FirstTimestamp:      ts,
		LastTimestamp:       ts,
		Count:               4,
		Type:                corev1.EventTypeWarning,
		EventTime:           mt,
		Series:              &corev1.EventSeries{Count: 4, LastObservedTime: mt},
		Action:              "Start",
		Related:             &corev1.ObjectReference{Kind: "Node", Name: "node-1"},
		ReportingController: "kubelet",
		ReportingInstance:   "node-1",
	}
}

func TestConversionMapsFields(t *testing.T) {
	in := fullCoreEvent()
	got := ToEventsV1(in)
	want := &eventsv1.Event{
		ObjectMeta:               in.ObjectMeta,
		EventTime:                in.EventTime,
		Series:                   &eventsv1.EventSeries{Count: 4, LastObservedTime: in.Series.LastObservedTime},
		ReportingController:      "kubelet",
		ReportingInstance:        "node-1",
		Action:                   "Start",
		Reason:                   "Started",
		Regarding:                in.InvolvedObject,
		Related:                  in.Related,
		Note:                     "started container",
		Type:                     corev1.EventTypeWarning,
		DeprecatedSource:         in.Source,
		DeprecatedFirstTimestamp: in.FirstTimestamp,
		DeprecatedLastTimestamp:  in.LastTimestamp,
		DeprecatedCount:          4,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ToEventsV1 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(in, FromEventsV1(got)); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	// The result shares nothing with the input.
	got.Related.Name = "changed"
	got.Labels["a"] = "changed"
	if in.Related.Name != "node-1" || in.Labels["a"] != "b" {
		t.Error("the conversion aliases its input")
	}
}

func TestListConversion(t *testing.T) {
	in := &corev1.EventList{ListMeta: metav1.ListMeta{ResourceVersion: "5", Continue: "c"}, Items: []corev1.Event{*fullCoreEvent()}}
	out := ToEventsV1List(in)
	if out.ResourceVersion != "5" || out.Continue != "c" || len(out.Items) != 1 || out.Items[0].Note != "started container" {
		t.Errorf("got %+v, want the list metadata and one converted item", out)
	}
	if diff := cmp.Diff(in, FromEventsV1List(out)); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if got := ToEventsV1List(&corev1.EventList{}); got.Items != nil {
		t.Errorf("got items %v, want nil for nil", got.Items)
	}
}

func FuzzConversionRoundTrip(f *testing.F) {
	f.Add("n", "Pod", "msg", "kubelet", int32(3), true)
	f.Add("", "", "", "", int32(0), false)
	f.Fuzz(func(t *testing.T, name, kind, msg, component string, count int32, series bool) {
		in := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: name},
			InvolvedObject: corev1.ObjectReference{Kind: kind},
			Message:        msg,
			Source:         corev1.EventSource{Component: component},
			Count:          count,
		}
		if series {
			in.Series = &corev1.EventSeries{Count: count}
		}
		if diff := cmp.Diff(in, FromEventsV1(ToEventsV1(in))); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	})
}
