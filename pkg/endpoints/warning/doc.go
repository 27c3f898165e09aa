// Package warning carries the warnings of a request to its response
// (serving.md 28). Code that serves a request (REST handlers, strategies,
// admission) calls [AddWarning] with the request's context; the
// [Recorder] on that context, put there by the handler chain's warning
// filter ([NewHeaderRecorder]), writes them as Warning headers.
//
// It is a leaf package, so that handlers and registries can add warnings
// without importing the server or the registry toolkit.
package warning
