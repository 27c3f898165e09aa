// Package filters holds the handler-chain filters of the API server, one per
// file, each a func WithX(handler, deps...) http.Handler, and BuildChain,
// which composes them in kube-apiserver's order (spec/serving.md §C).
//
// Request state travels on the request context: RequestInfo, user, audit ID
// and received timestamp through pkg/endpoints/request; the audit Context
// through pkg/audit; warnings through pkg/endpoints/warning; watch
// termination through WatchTerminated.
package filters
