// Package metrics holds the request metrics of one API server, named,
// labelled and bucketed as kube-apiserver's (apiserver_request_total,
// apiserver_request_duration_seconds, apiserver_request_sli_duration_seconds,
// apiserver_response_sizes, apiserver_longrunning_requests,
// apiserver_current_inflight_requests, apiserver_watch_events_total and
// _sizes, apiserver_tls_handshake_errors_total,
// apiserver_requested_deprecated_apis), and the filter that records
// them. Each server creates its own Metrics on its own
// prometheus.Registerer; nothing is registered globally.
//
// The request path pays one map lookup per request: the children of a label
// combination are resolved once and kept (see Metrics.seriesFor).
package metrics
