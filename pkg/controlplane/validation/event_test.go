package validation

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	eventsv1beta1 "k8s.io/api/events/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// legacyEvent is an old-style event as kubectl's and client-go's old
// recorders write it.
func legacyEvent(mut func(*corev1.Event)) *corev1.Event {
	ts := metav1.NewTime(time.Unix(1700000000, 0))
	e := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "pod.1234", Namespace: "ns", ResourceVersion: "1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "pod"},
		Reason:         "Started",
		Message:        "started",
		Source:         corev1.EventSource{Component: "kubelet"},
		FirstTimestamp: ts,
		LastTimestamp:  ts,
		Count:          1,
		Type:           corev1.EventTypeNormal,
	}
	if mut != nil {
		mut(e)
	}
	return e
}

// newEvent is a new-style event as an events.k8s.io/v1 client writes it.
func newEvent(mut func(*corev1.Event)) *corev1.Event {
	e := &corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: "pod.5678", Namespace: "ns", ResourceVersion: "1"},
		InvolvedObject:      corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "pod"},
		Reason:              "Scheduled",
		Message:             "assigned",
		Type:                corev1.EventTypeNormal,
		EventTime:           metav1.NewMicroTime(time.Unix(1700000000, 0)),
		Action:              "Binding",
		ReportingController: "example.com/scheduler",
		ReportingInstance:   "scheduler-1",
	}
	if mut != nil {
		mut(e)
	}
	return e
}

func TestValidateEventCreate(t *testing.T) {
	core, v1, v1beta1 := corev1.SchemeGroupVersion, eventsv1.SchemeGroupVersion, eventsv1beta1.SchemeGroupVersion
	cases := []struct {
		name string
		gv   schema.GroupVersion
		e    *corev1.Event
		want []string
	}{
		{"legacy core", core, legacyEvent(nil), nil},
		{"legacy in default without involved namespace", core, legacyEvent(func(e *corev1.Event) {
			e.Namespace = "default"
			e.InvolvedObject.Namespace = ""
		}), nil},
		{"legacy namespace mismatch", core, legacyEvent(func(e *corev1.Event) { e.InvolvedObject.Namespace = "other" }),
			[]string{invalid + " involvedObject.namespace"}},
		{"legacy no involved namespace outside default", core, legacyEvent(func(e *corev1.Event) { e.InvolvedObject.Namespace = "" }),
			[]string{invalid + " involvedObject.namespace"}},
		{"legacy through v1beta1", v1beta1, legacyEvent(nil), nil},
		{"legacy core ignores name rules", core, legacyEvent(func(e *corev1.Event) { e.Name = "Pod:1" }), nil},
		{"new style through core", core, newEvent(nil), nil},
		{"new style in kube-system without involved namespace", core, newEvent(func(e *corev1.Event) {
			e.Namespace = "kube-system"
			e.InvolvedObject.Namespace = ""
		}), nil},
		{"new style missing reporting fields", core, newEvent(func(e *corev1.Event) {
			e.ReportingController, e.ReportingInstance, e.Action, e.Reason = "", "", "", ""
		}), []string{
			required + " reportingController",
			invalid + " reportingController", // IsQualifiedName reports two problems with ""
			invalid + " reportingController",
			required + " reportingInstance",
			required + " action",
			required + " reason",
		}},
		{"new style too long", core, newEvent(func(e *corev1.Event) {
			e.ReportingInstance = strings.Repeat("i", 129)
			e.Action = strings.Repeat("a", 129)
			e.Reason = strings.Repeat("r", 129)
			e.Message = strings.Repeat("m", 1025)
		}), []string{invalid + " reportingInstance", invalid + " action", invalid + " reason", invalid + " message"}},
		{"new style at the limits", core, newEvent(func(e *corev1.Event) {
			e.ReportingInstance = strings.Repeat("i", 128)
			e.Message = strings.Repeat("m", 1024)
		}), nil},
		{"new style bad controller", core, newEvent(func(e *corev1.Event) { e.ReportingController = "a/b/c" }),
			[]string{invalid + " reportingController"}},
		{"v1 valid", v1, newEvent(nil), nil},
		{"v1 legacy event", v1, legacyEvent(nil), []string{
			required + " eventTime",
			invalid + " firstTimestamp",
			invalid + " lastTimestamp",
			invalid + " count",
			invalid + " source",
		}},
		{"v1 bad type", v1, newEvent(func(e *corev1.Event) { e.Type = "Info" }), []string{invalid + " type"}},
		{"v1 bad name", v1, newEvent(func(e *corev1.Event) { e.Name = "Pod:1" }), []string{invalid + " metadata.name"}},
		{"v1 series", v1, newEvent(func(e *corev1.Event) {
			e.Series = &corev1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(time.Unix(1700000100, 0))}
		}), nil},
		{"v1 bad series", v1, newEvent(func(e *corev1.Event) { e.Series = &corev1.EventSeries{Count: 1} }),
			[]string{invalid + " series.count", required + " series.lastObservedTime"}},
		{"unknown version is strict", schema.GroupVersion{}, newEvent(func(e *corev1.Event) { e.Type = "" }),
			[]string{invalid + " type"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, ValidateEventCreate(tc.e, tc.gv), tc.want...)
			checkErrs(t, ValidateEventCreateFields(tc.e, tc.gv), tc.want...)
		})
	}
	checkDetail(t, ValidateEventCreate(newEvent(func(e *corev1.Event) { e.Type = "Info" }), v1), "type", "has invalid value: Info")
	checkDetail(t, ValidateLegacyEvent(legacyEvent(func(e *corev1.Event) { e.InvolvedObject.Namespace = "x" })),
		"involvedObject.namespace", "does not match event.namespace")
	checkDetail(t, ValidateLegacyEvent(newEvent(func(e *corev1.Event) { e.Reason = strings.Repeat("r", 129) })),
		"reason", "can have at most 128 characters")
}

func TestValidateEventUpdate(t *testing.T) {
	core, v1 := corev1.SchemeGroupVersion, eventsv1.SchemeGroupVersion
	later := metav1.NewMicroTime(time.Unix(1700000500, 0))
	cases := []struct {
		name     string
		gv       schema.GroupVersion
		old, new *corev1.Event
		want     []string
	}{
		{"core may change anything", core, legacyEvent(nil), legacyEvent(func(e *corev1.Event) {
			e.Count = 5
			e.Message = "again"
		}), nil},
		{"core still legacy-validated", core, legacyEvent(nil), legacyEvent(func(e *corev1.Event) { e.InvolvedObject.Namespace = "x" }),
			[]string{invalid + " involvedObject.namespace"}},
		{"v1 series update", v1, newEvent(nil), newEvent(func(e *corev1.Event) {
			e.Series = &corev1.EventSeries{Count: 2, LastObservedTime: later}
		}), nil},
		{"v1 bad series update", v1, newEvent(nil), newEvent(func(e *corev1.Event) { e.Series = &corev1.EventSeries{Count: 1, LastObservedTime: later} }),
			[]string{invalid + " series.count"}},
		{"v1 immutable fields", v1, newEvent(nil), newEvent(func(e *corev1.Event) {
			e.Message = "changed"
			e.Reason = "Other"
			e.Action = "Other"
			e.Type = corev1.EventTypeWarning
			e.ReportingInstance = "scheduler-2"
			e.Related = &corev1.ObjectReference{Kind: "Node", Name: "n"}
		}), []string{
			invalid + " reason",
			invalid + " message",
			invalid + " reason",
			invalid + " type",
			invalid + " action",
			invalid + " related",
			invalid + " reportingInstance",
		}},
		{"v1 labels may change", v1, newEvent(nil), newEvent(func(e *corev1.Event) { e.Labels = map[string]string{"a": "b"} }), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, ValidateEventUpdate(tc.new, tc.old, tc.gv), tc.want...)
			checkErrs(t, ValidateEventUpdateFields(tc.new, tc.old, tc.gv), tc.want...)
		})
	}
}
