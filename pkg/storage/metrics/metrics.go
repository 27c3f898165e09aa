package metrics

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Names, label names, help texts and buckets follow k8s.io/apiserver
// v1.37: pkg/storage/etcd3/metrics/metrics.go and
// pkg/storage/cacher/metrics/metrics.go. Help texts carry the stability
// prefix component-base adds.

// etcdRequestBuckets are etcd_request_duration_seconds' (the same as
// apiserver_request_duration_seconds').
var etcdRequestBuckets = []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3,
	4, 5, 6, 8, 10, 15, 20, 30, 45, 60}

// readWaitBuckets are apiserver_watch_cache_read_wait_seconds'.
var readWaitBuckets = []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3}

var (
	opLabels = []string{"operation", "group", "resource"}
	grLabels = []string{"group", "resource"}
	// The storage list families' labels: the storage that served the
	// list ("etcd", "watchcache"; kapi's memory backend says "memory") and,
	// for two of them, the index used ("": kapi lists by key prefix).
	listIndexLabels = []string{"group", "resource", "storage", "index"}
	listLabels      = []string{"group", "resource", "storage"}
)

// Values of the storage label of the storage list families.
const (
	StorageEtcd       = "etcd"
	StorageWatchCache = "watchcache"
	StorageMemory     = "memory"
)

// Metrics are the storage metrics of one server. Methods are safe for
// concurrent use.
type Metrics struct {
	etcdLatency    *prometheus.HistogramVec // etcd_request_duration_seconds
	etcdRequests   *prometheus.CounterVec   // etcd_requests_total
	etcdErrors     *prometheus.CounterVec   // etcd_request_errors_total
	eventsReceived *prometheus.CounterVec   // apiserver_storage_events_received_total
	bookmarks      *prometheus.CounterVec   // etcd_bookmark_total
	decodeErrors   *prometheus.CounterVec   // apiserver_storage_decode_errors_total
	listTotal      *prometheus.CounterVec   // apiserver_storage_list_total
	listFetched    *prometheus.CounterVec   // apiserver_storage_list_fetched_objects_total
	listEvaluated  *prometheus.CounterVec   // apiserver_storage_list_evaluated_objects_total
	listReturned   *prometheus.CounterVec   // apiserver_storage_list_returned_objects_total
	listLatency    *prometheus.HistogramVec // apiserver_storage_list_duration_seconds
	objects        *objectCounts            // apiserver_resource_objects, apiserver_resource_size_estimate_bytes

	cacheEventsReceived   *prometheus.CounterVec   // apiserver_watch_cache_events_received_total
	cacheEventsDispatched *prometheus.CounterVec   // apiserver_watch_cache_events_dispatched_total
	cacheInitializations  *prometheus.CounterVec   // apiserver_watch_cache_initializations_total
	cacheResourceVersion  *prometheus.GaugeVec     // apiserver_watch_cache_resource_version
	cacheCapacity         *prometheus.GaugeVec     // watch_cache_capacity
	cacheCapacityUp       *prometheus.CounterVec   // watch_cache_capacity_increase_total
	cacheCapacityDown     *prometheus.CounterVec   // watch_cache_capacity_decrease_total
	cacheReadWait         *prometheus.HistogramVec // apiserver_watch_cache_read_wait_seconds
	cacheInitDuration     *prometheus.HistogramVec // apiserver_watch_cache_initialization_duration_seconds
	cacheConsistentReads  *prometheus.CounterVec   // apiserver_watch_cache_consistent_read_total
	cacheInitEvents       *prometheus.CounterVec   // apiserver_init_events_total
	cacheTerminated       *prometheus.CounterVec   // apiserver_terminated_watchers_total
	consistencyChecks     *prometheus.CounterVec   // apiserver_storage_consistency_checks_total
	dispatch              *dispatchFamily          // apiserver_watch_events_dispatch_duration_seconds (dispatch.go)
	leaseObjectCounts     prometheus.Histogram     // etcd_lease_object_counts

	// The deprecated families kube-apiserver v1.37 hides unless
	// --show-hidden-metrics-for-version is given (nil otherwise; see
	// Options.ShowHidden). apiserver_storage_objects is objects'.
	hiddenBookmarks    *prometheus.GaugeVec   // etcd_bookmark_counts
	hiddenCacheList    *prometheus.CounterVec // apiserver_cache_list_total
	hiddenCacheFetched *prometheus.CounterVec // apiserver_cache_list_fetched_objects_total
	hiddenCacheReturns *prometheus.CounterVec // apiserver_cache_list_returned_objects_total
}

// HiddenFamilies are the deprecated families of Options.ShowHidden, which
// kube-apiserver v1.37's component-base hides without
// --show-hidden-metrics-for-version (and counts in hidden_metrics_total).
var HiddenFamilies = []string{
	"apiserver_storage_objects",
	"etcd_bookmark_counts",
	"apiserver_cache_list_total",
	"apiserver_cache_list_fetched_objects_total",
	"apiserver_cache_list_returned_objects_total",
}

// Options change which families New makes.
type Options struct {
	// ShowHidden also serves the deprecated families component-base
	// hides in kube-apiserver v1.37 (its --show-hidden-metrics-for-version
	// 1.36): apiserver_storage_objects (STABLE, deprecated in 1.34.0),
	// etcd_bookmark_counts (ALPHA, deprecated in 1.36.0) and
	// apiserver_cache_list_total, apiserver_cache_list_fetched_objects_total
	// and apiserver_cache_list_returned_objects_total (ALPHA, deprecated in
	// 1.37.0), with component-base's "(Deprecated since …)" help prefix.
	ShowHidden bool
}

// New creates the storage metrics and registers them on reg (nil: not
// registered). Registering twice on one registry fails.
func New(reg prometheus.Registerer) (*Metrics, error) {
	return NewWithOptions(reg, Options{})
}

// NewWithOptions is New with options.
func NewWithOptions(reg prometheus.Registerer, opts Options) (*Metrics, error) {
	counter := func(name, help string, labels []string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	gauge := func(name, help string, labels []string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	}
	m := &Metrics{
		etcdLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "etcd_request_duration_seconds",
			Help:    "[ALPHA] Etcd request latency in seconds for each operation and object type.",
			Buckets: etcdRequestBuckets,
		}, opLabels),
		etcdRequests:   counter("etcd_requests_total", "[ALPHA] Etcd request counts for each operation and object type.", opLabels),
		etcdErrors:     counter("etcd_request_errors_total", "[ALPHA] Etcd failed request counts for each operation and object type.", opLabels),
		eventsReceived: counter("apiserver_storage_events_received_total", "[BETA] Number of etcd events received split by kind.", grLabels),
		// etcd_bookmark_total replaces etcd_bookmark_counts (a gauge,
		// deprecated in 1.36.0 and so hidden by kube-apiserver v1.37).
		bookmarks:    counter("etcd_bookmark_total", "[ALPHA] Number of etcd bookmarks (progress notify events) split by kind.", grLabels),
		decodeErrors: counter("apiserver_storage_decode_errors_total", "[ALPHA] Number of stored object decode errors split by object type", grLabels),
		// Lists served by etcd and by the watch cache, told apart by the
		// storage label (k8s.io/apiserver v0.37.2 pkg/storage/metrics).
		listTotal:     counter("apiserver_storage_list_total", "[ALPHA] Number of LIST requests served from storage", listIndexLabels),
		listFetched:   counter("apiserver_storage_list_fetched_objects_total", "[ALPHA] Number of objects read from storage in the course of serving a LIST request", listIndexLabels),
		listEvaluated: counter("apiserver_storage_list_evaluated_objects_total", "[ALPHA] Number of objects tested in the course of serving a LIST request from storage", listLabels),
		listReturned:  counter("apiserver_storage_list_returned_objects_total", "[ALPHA] Number of objects returned for a LIST request from storage", listLabels),
		listLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_storage_list_duration_seconds",
			Help:    "[ALPHA] Latency of the storage layer GetList call in seconds, including object decode, split by whether etcd RangeStream was used.",
			Buckets: etcdRequestBuckets,
		}, []string{"streamed", "group", "resource"}),
		objects: newObjectCounts(opts.ShowHidden),

		cacheEventsReceived:   counter("apiserver_watch_cache_events_received_total", "[ALPHA] Counter of events received in watch cache broken by resource type.", grLabels),
		cacheEventsDispatched: counter("apiserver_watch_cache_events_dispatched_total", "[ALPHA] Counter of events dispatched in watch cache broken by resource type.", grLabels),
		cacheInitializations:  counter("apiserver_watch_cache_initializations_total", "[ALPHA] Counter of watch cache initializations broken by resource type.", grLabels),
		cacheResourceVersion:  gauge("apiserver_watch_cache_resource_version", "[ALPHA] Current resource version of watch cache broken by resource type. This is truncated to the 15 least significant digits.", grLabels),
		// Upstream names these three without the apiserver_ namespace.
		cacheCapacity:     gauge("watch_cache_capacity", "[ALPHA] Total capacity of watch cache broken by resource type.", grLabels),
		cacheCapacityUp:   counter("watch_cache_capacity_increase_total", "[ALPHA] Total number of watch cache capacity increase events broken by resource type.", grLabels),
		cacheCapacityDown: counter("watch_cache_capacity_decrease_total", "[ALPHA] Total number of watch cache capacity decrease events broken by resource type.", grLabels),
		cacheReadWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_watch_cache_read_wait_seconds",
			Help:    "[ALPHA] Histogram of time spent waiting for a watch cache to become fresh.",
			Buckets: readWaitBuckets,
		}, grLabels),
		cacheInitDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_watch_cache_initialization_duration_seconds",
			Help:    "[ALPHA] Histogram of watch cache initialization duration in seconds, broken by resource type.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 180, 600},
		}, grLabels),
		cacheConsistentReads: counter("apiserver_watch_cache_consistent_read_total", "[ALPHA] Counter for consistent reads from cache.", []string{"group", "resource", "success", "fallback"}),
		cacheInitEvents:      counter("apiserver_init_events_total", "[ALPHA] Counter of init events processed in watch cache broken by resource type.", grLabels),
		cacheTerminated:      counter("apiserver_terminated_watchers_total", "[ALPHA] Counter of watchers closed due to unresponsiveness broken by resource type.", grLabels),
		consistencyChecks:    counter("apiserver_storage_consistency_checks_total", "[ALPHA] Counter for status of consistency checks between etcd and watch cache", []string{"group", "resource", "status"}),
		dispatch:             newDispatchFamily(),
		leaseObjectCounts: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "etcd_lease_object_counts",
			Help:    "[ALPHA] Number of objects attached to a single etcd lease.",
			Buckets: []float64{10, 50, 100, 500, 1000, 2500, 5000},
		}),
	}
	collectors := []prometheus.Collector{
		m.etcdLatency, m.etcdRequests, m.etcdErrors, m.eventsReceived, m.bookmarks, m.decodeErrors,
		m.listTotal, m.listFetched, m.listEvaluated, m.listReturned, m.listLatency, m.objects,
		m.cacheEventsReceived, m.cacheEventsDispatched, m.cacheInitializations, m.cacheResourceVersion,
		m.cacheCapacity, m.cacheCapacityUp, m.cacheCapacityDown, m.cacheReadWait, m.cacheInitDuration, m.cacheConsistentReads,
		m.cacheInitEvents, m.cacheTerminated, m.consistencyChecks, m.dispatch, m.leaseObjectCounts,
	}
	if opts.ShowHidden {
		// Help texts as component-base prints a deprecated family's.
		m.hiddenBookmarks = gauge("etcd_bookmark_counts", "[ALPHA] (Deprecated since 1.36.0) Number of etcd bookmarks (progress notify events) split by kind.", grLabels)
		m.hiddenCacheList = counter("apiserver_cache_list_total", "[ALPHA] (Deprecated since 1.37.0) Number of LIST requests served from watch cache", []string{"group", "resource", "index"})
		m.hiddenCacheFetched = counter("apiserver_cache_list_fetched_objects_total", "[ALPHA] (Deprecated since 1.37.0) Number of objects read from watch cache in the course of serving a LIST request", []string{"group", "resource", "index"})
		m.hiddenCacheReturns = counter("apiserver_cache_list_returned_objects_total", "[ALPHA] (Deprecated since 1.37.0) Number of objects returned for a LIST request from watch cache", grLabels)
		collectors = append(collectors, m.hiddenBookmarks, m.hiddenCacheList, m.hiddenCacheFetched, m.hiddenCacheReturns)
	}
	if reg != nil {
		for _, c := range collectors {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("register storage metrics: %w", err)
			}
		}
	}
	return m, nil
}

// Resource is the storage metrics of one resource (group and resource
// labels). A nil *Resource records nothing; methods are safe for
// concurrent use.
type Resource struct {
	m  *Metrics
	gr schema.GroupResource
	// requestsOnly: only etcd requests and decode errors are recorded
	// (see RequestsOnly).
	requestsOnly bool

	listTotal, listFetched, listEvaluated, listReturned func() prometheus.Counter
	listLatency                                         [2]func() prometheus.Observer // not streamed, streamed
	eventsReceived                                      func() prometheus.Counter
}

// Resource returns the metrics of resource gr stored in etcd (nil if m is
// nil).
func (m *Metrics) Resource(gr schema.GroupResource) *Resource {
	return m.ResourceIn(gr, StorageEtcd)
}

// ResourceIn returns the metrics of resource gr whose lists the storage
// named storage serves (StorageEtcd, StorageMemory; nil if m is nil).
func (m *Metrics) ResourceIn(gr schema.GroupResource, storage string) *Resource {
	if m == nil {
		return nil
	}
	lazy := func(vec *prometheus.CounterVec, extra ...string) func() prometheus.Counter {
		return sync.OnceValue(func() prometheus.Counter {
			return vec.WithLabelValues(append([]string{gr.Group, gr.Resource}, extra...)...)
		})
	}
	return &Resource{
		m:              m,
		gr:             gr,
		listTotal:      lazy(m.listTotal, storage, ""),
		listFetched:    lazy(m.listFetched, storage, ""),
		listEvaluated:  lazy(m.listEvaluated, storage),
		listReturned:   lazy(m.listReturned, storage),
		eventsReceived: lazy(m.eventsReceived),
		listLatency: [2]func() prometheus.Observer{
			sync.OnceValue(func() prometheus.Observer { return m.listLatency.WithLabelValues("false", gr.Group, gr.Resource) }),
			sync.OnceValue(func() prometheus.Observer { return m.listLatency.WithLabelValues("true", gr.Group, gr.Resource) }),
		},
	}
}

// RequestsOnly returns the metrics of a store of gr that is no resource
// of kube-apiserver's but kapi's own data in etcd (the API server leases,
// the NodePort allocations; nil if m is nil). Only its etcd requests
// (etcd_request_duration_seconds, etcd_requests_total,
// etcd_request_errors_total) and decode errors are recorded, as the plain
// etcd storage kube-apiserver keeps such data in records them; its lists,
// watch events and bookmarks, object count, size estimate and watch cache
// record nothing: upstream has no watch cache or registry for that data,
// so none of those series exist there.
func (m *Metrics) RequestsOnly(gr schema.GroupResource) *Resource {
	r := m.Resource(gr)
	if r != nil {
		r.requestsOnly = true
	}
	return r
}

// Etcd operations, as upstream (k8s.io/apiserver v0.37.2's etcd3 store
// and watcher) names them in etcd_request_duration_seconds,
// etcd_requests_total and etcd_request_errors_total.
const (
	// OpGet reads one key: a GET, the read before an update or delete, a
	// list or watch of one object.
	OpGet    = "get"
	OpCreate = "create"
	OpUpdate = "update"
	OpDelete = "delete"
	// OpList is one page of a recursive list read page by page: upstream
	// reads so only a page with selectors (etcd cannot apply them, so
	// the page size means nothing to it), or an etcd without RangeStream.
	OpList = "list"
	// OpListStream is a whole recursive list read as one etcd range
	// stream (EtcdRangeStream, on by default in v1.37): every other
	// recursive list, and the initial state of a recursive watch.
	OpListStream = "listStream"
	// OpGetCurrentResourceVersion reads etcd's current revision: a
	// consistent read from the watch cache, a watch from the latest
	// revision or with initial events from a given one, a read at a
	// revision etcd does not have yet.
	OpGetCurrentResourceVersion = "getCurrentResourceVersion"
	// OpListWithCount counts a resource's keys.
	OpListWithCount = "listWithCount"
)

// EtcdRequest records one request to etcd, started at start, that failed
// with err (nil: succeeded).
func (r *Resource) EtcdRequest(op string, start time.Time, err error) {
	if r == nil {
		return
	}
	r.m.etcdLatency.WithLabelValues(op, r.gr.Group, r.gr.Resource).Observe(time.Since(start).Seconds())
	r.m.etcdRequests.WithLabelValues(op, r.gr.Group, r.gr.Resource).Inc()
	if err != nil {
		r.m.etcdErrors.WithLabelValues(op, r.gr.Group, r.gr.Resource).Inc()
	}
}

// LeaseObjectCount records, when a store grants a new etcd lease for the
// keys it writes with a TTL, the number of objects attached to its
// previous lease, counting the write that needs the new one (upstream's
// leaseManager: 1 for a store's first lease). Recorded for every store,
// RequestsOnly ones included, as upstream's plain etcd storage does.
func (r *Resource) LeaseObjectCount(n int64) {
	if r != nil {
		r.m.leaseObjectCounts.Observe(float64(n))
	}
}

// EtcdEvent counts one event received from an etcd watch.
func (r *Resource) EtcdEvent() {
	if r != nil && !r.requestsOnly {
		r.eventsReceived().Inc()
	}
}

// EtcdBookmark counts one progress notification received from etcd.
func (r *Resource) EtcdBookmark() {
	if r != nil && !r.requestsOnly {
		r.m.bookmarks.WithLabelValues(r.gr.Group, r.gr.Resource).Inc()
		if r.m.hiddenBookmarks != nil {
			// A gauge only ever incremented, as upstream's.
			r.m.hiddenBookmarks.WithLabelValues(r.gr.Group, r.gr.Resource).Inc()
		}
	}
}

// DecodeError counts one stored object that could not be decoded.
func (r *Resource) DecodeError() {
	if r != nil {
		r.m.decodeErrors.WithLabelValues(r.gr.Group, r.gr.Resource).Inc()
	}
}

// StorageList records one LIST served by the storage (not the watch
// cache): the objects read, the ones tested against the selectors and the
// ones returned.
func (r *Resource) StorageList(fetched, evaluated, returned int) {
	if r == nil || r.requestsOnly {
		return
	}
	r.listTotal().Inc()
	r.listFetched().Add(float64(fetched))
	r.listEvaluated().Add(float64(evaluated))
	r.listReturned().Add(float64(returned))
}

// ListLatency records how long one GetList of the etcd storage took
// (apiserver_storage_list_duration_seconds, upstream's etcd3
// RecordListLatency; recorded on errors too): streamed tells whether the
// list read etcd as one range stream (upstream's EtcdRangeStream, on by
// default in v1.37).
func (r *Resource) ListLatency(streamed bool, start time.Time) {
	if r == nil || r.requestsOnly {
		return
	}
	i := 0
	if streamed {
		i = 1
	}
	r.listLatency[i]().Observe(time.Since(start).Seconds())
}

// TrackObjects makes count the source of the resource's object count
// (apiserver_resource_objects), read at every
// scrape; a failing count reports -1, as upstream. A later call for the
// same resource replaces the source. The returned function stops tracking
// (if the source was not replaced since).
func (r *Resource) TrackObjects(count CountFunc) (untrack func()) {
	if r == nil || r.requestsOnly {
		return func() {}
	}
	return r.m.objects.track(r.m.objects.sources, r.gr, count)
}

// TrackSize makes estimate the source of the resource's
// apiserver_resource_size_estimate_bytes, read at every scrape; a failing
// estimate reports -1, as upstream. A later call for the same resource
// replaces the source; the returned function stops tracking (if the
// source was not replaced since).
func (r *Resource) TrackSize(estimate CountFunc) (untrack func()) {
	if r == nil || r.requestsOnly {
		return func() {}
	}
	return r.m.objects.track(r.m.objects.sizes, r.gr, estimate)
}
