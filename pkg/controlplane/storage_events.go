package controlplane

import (
	eventsv1 "k8s.io/api/events/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/event"
)

// eventsGroup is the table of events.k8s.io: its events are core/v1's,
// stored once and converted on the way in and out.
var eventsGroup = apiGroup{name: eventsv1.GroupName, versions: []apiVersion{{
	name: "v1",
	resources: []apiResource{
		{name: "events", storage: viewOf(eventsResource, event.NewEventsV1REST), fieldLabels: event.EventsV1FieldLabelConversion},
	},
}}}
