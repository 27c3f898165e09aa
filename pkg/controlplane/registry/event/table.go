package event

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

var (
	eventDocs          = corev1.Event{}.SwaggerDoc()
	objectReferenceDoc = corev1.ObjectReference{}.SwaggerDoc()
)

// TableConvertor renders events (core/v1 or events.k8s.io/v1) as kubectl
// shows them: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE, and with -o wide
// SUBOBJECT, SOURCE, FIRST SEEN, COUNT, NAME.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Last Seen", Type: "string", Description: eventDocs["lastTimestamp"]},
		{Name: "Type", Type: "string", Description: eventDocs["type"]},
		{Name: "Reason", Type: "string", Description: eventDocs["reason"]},
		{Name: "Object", Type: "string", Description: eventDocs["involvedObject"]},
		{Name: "Subobject", Type: "string", Priority: 1, Description: objectReferenceDoc["fieldPath"]},
		{Name: "Source", Type: "string", Priority: 1, Description: eventDocs["source"]},
		{Name: "Message", Type: "string", Description: eventDocs["message"]},
		{Name: "First Seen", Type: "string", Priority: 1, Description: eventDocs["firstTimestamp"]},
		{Name: "Count", Type: "string", Priority: 1, Description: eventDocs["count"]},
		{Name: "Name", Type: "string", Priority: 1, Format: "name", Description: table.ObjectMetaDescriptions["name"]},
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		switch e := obj.(type) {
		case *corev1.Event:
			return eventRow(e), true
		case *eventsv1.Event:
			return eventRow(FromEventsV1(e)), true
		default:
			return nil, false
		}
	},
}

// eventRow is kube's printEvent, wide.
func eventRow(e *corev1.Event) []any {
	first := table.Since(e.FirstTimestamp)
	if e.FirstTimestamp.IsZero() {
		first = table.SinceMicro(e.EventTime)
	}
	last := table.Since(e.LastTimestamp)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if e.Series != nil {
		last = table.SinceMicro(e.Series.LastObservedTime)
		count = e.Series.Count
	} else if count == 0 {
		// Singleton events of the new API have no count.
		count = 1
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target = fmt.Sprintf("%s/%s", target, e.InvolvedObject.Name)
	}
	return []any{
		last,
		e.Type,
		e.Reason,
		target,
		e.InvolvedObject.FieldPath,
		eventSource(e),
		strings.TrimSpace(e.Message),
		first,
		int64(count),
		e.Name,
	}
}

// eventSource is "component, host", falling back to the reporting
// controller and instance, without the host part when there is none.
func eventSource(e *corev1.Event) string {
	component := firstNonEmpty(e.Source.Component, e.ReportingController)
	instance := firstNonEmpty(e.Source.Host, e.ReportingInstance)
	if instance == "" {
		return component
	}
	return component + ", " + instance
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
