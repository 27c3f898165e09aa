// Package audit records what happened to each request as audit.k8s.io/v1
// Events and hands them to a Backend (today: a JSON-lines log file).
//
// The handler chain creates one Context per request (see WithContext); the
// audit filter fills it with an Event and sends a snapshot of it to the
// backend at each stage. Other filters and handlers add annotations and the
// response Status through the package functions that take a context.Context,
// which are no-ops when the request is not audited.
package audit
