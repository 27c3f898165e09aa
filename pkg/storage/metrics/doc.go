// Package metrics holds the storage metrics of one server, named, labelled
// and bucketed as kube-apiserver's: etcd request latencies and counts
// (etcd_request_duration_seconds, etcd_requests_total,
// etcd_request_errors_total), events and bookmarks received from etcd,
// LIST costs (apiserver_storage_list_*, of etcd's, the watch cache's and
// the memory backend's lists, told apart by the storage label), decode
// errors, object counts (apiserver_resource_objects) and the watch cache's
// (apiserver_watch_cache_*, watch_cache_capacity, ...).
//
// One [Metrics] is created per server on its own prometheus.Registerer and
// handed to the etcd3 store, the watch cache and the memory backend
// through their Config; a nil *Metrics (or *Resource) records nothing.
// The per-resource children are resolved once, on first use.
package metrics
