// Package metrics holds the request metrics of one API server (request
// counts, latencies, in-flight gauges, TLS handshake errors) and the filter
// that records them. Each server creates its own Metrics on its own
// prometheus.Registerer; nothing is registered globally.
package metrics
