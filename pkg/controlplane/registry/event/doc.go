// Package event serves events in two groups over one storage, as
// kube-apiserver does: core/v1 events and events.k8s.io/v1 events are the
// same objects, stored once at /events/<namespace>/<name> as core/v1
// Events. [NewREST] returns the core/v1 store; [NewEventsV1REST] serves
// events.k8s.io/v1 on top of it, converting each object in and out
// ([ToEventsV1], [FromEventsV1]: the field mapping of upstream's
// pkg/apis/events/v1 conversion).
//
// Validation depends on the group-version of the request (from the
// request's RequestInfo): core/v1 writes get the legacy rules only,
// events.k8s.io/v1 writes the strict ones (see
// pkg/controlplane/validation.ValidateEventCreate).
//
// kube-apiserver stores events with a TTL (--event-ttl, 1h); kapi's
// storage has no TTL, so pkg/controlplane runs a collector that deletes
// events not written for that long.
package event
