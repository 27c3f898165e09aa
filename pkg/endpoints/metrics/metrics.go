package metrics

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Component is the value of the component label of this server's resource
// requests (upstream's metrics.APIServerComponent).
const Component = "apiserver"

// Request kinds of apiserver_current_inflight_requests.
const (
	ReadOnlyKind = "readOnly"
	MutatingKind = "mutating"
)

// Names, label names, help texts and buckets follow k8s.io/apiserver
// v1.37: pkg/endpoints/metrics/metrics.go, as listed in
// test/instrumentation/testdata/stable-metrics-list.yaml (STABLE ones) and
// documentation-list.yaml (the others). Help texts carry the stability
// prefix component-base adds. The expected families are checked against
// test/e2e/testdata/metrics/families.json.
var (
	// requestDurationBuckets are apiserver_request_duration_seconds'.
	requestDurationBuckets = []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3,
		4, 5, 6, 8, 10, 15, 20, 30, 45, 60}
	// requestSLIBuckets are apiserver_request_sli_duration_seconds'.
	requestSLIBuckets = []float64{0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3,
		4, 5, 6, 8, 10, 15, 20, 30, 45, 60}
	// responseSizeBuckets are 1 KB to 1 GB, ×10 (ExponentialBuckets(1000, 10, 7)).
	responseSizeBuckets = prometheus.ExponentialBuckets(1000, 10, 7)
	// watchListBuckets are apiserver_watch_list_duration_seconds'.
	watchListBuckets = []float64{0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3,
		4, 5, 6, 8, 10, 15, 20, 30, 45, 60, 90, 120, 180, 300}
	// watchEventSizeBuckets are 1 KiB to 128 KiB, ×2
	// (ExponentialBuckets(1024, 2, 8)).
	watchEventSizeBuckets = prometheus.ExponentialBuckets(1024, 2, 8)

	requestLabels     = []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component", "code"}
	durationLabels    = []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"}
	resourceLabels    = []string{"verb", "group", "version", "resource", "subresource", "scope", "component"}
	watchEventsLabels = []string{"group", "version", "kind"}
)

// Metrics are the request metrics of one server. A nil *Metrics is valid and
// records nothing. All methods are safe for concurrent use.
type Metrics struct {
	requests           *prometheus.CounterVec   // apiserver_request_total
	latencies          *prometheus.HistogramVec // apiserver_request_duration_seconds
	sliLatencies       *prometheus.HistogramVec // apiserver_request_sli_duration_seconds
	responseSizes      *prometheus.HistogramVec // apiserver_response_sizes
	longRunning        *prometheus.GaugeVec     // apiserver_longrunning_requests
	inflight           *prometheus.GaugeVec     // apiserver_current_inflight_requests
	inflightReadOnly   prometheus.Gauge
	inflightMutating   prometheus.Gauge
	inqueue            *prometheus.GaugeVec // apiserver_current_inqueue_requests
	executing, waiting *Watermark           // API Priority and Fairness's
	tlsHandshakeErrors prometheus.Counter
	watchEvents        *prometheus.CounterVec   // apiserver_watch_events_total
	watchEventSizes    *prometheus.HistogramVec // apiserver_watch_events_sizes
	requestBodySizes   *prometheus.HistogramVec // apiserver_request_body_size_bytes
	watchListLatencies *prometheus.HistogramVec // apiserver_watch_list_duration_seconds
	deprecatedAPIs     *prometheus.GaugeVec     // apiserver_requested_deprecated_apis
	fieldValidation    *fieldValidations        // field_validation_request_duration_seconds
	timestamps         *timestampComparisons    // apiserver_request_timestamp_comparison_time
	validation         *validationCounters      // apiserver_validation_*
	// requestFilterDuration is apiserver_request_filter_duration_seconds.
	requestFilterDuration *prometheus.HistogramVec
	filters               filterObservers
	auth                  *AuthMetrics

	// maxInFlightObserver, if set, is told the max-in-flight filter's
	// counts (apiserver_flowcontrol_read_vs_write_current_requests with
	// API Priority and Fairness off).
	maxInFlightObserver func(mutating bool, n int64)

	// series caches the children of one label combination, so that a
	// request costs one map lookup instead of one per family.
	mu     sync.RWMutex
	series map[seriesKey]*series
}

// New creates the metrics and registers them on reg (nil: not registered).
// Registering twice on one registry fails.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_request_total",
			Help: "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
		}, requestLabels),
		latencies: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_request_duration_seconds",
			Help:    "[STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
			Buckets: requestDurationBuckets,
		}, durationLabels),
		sliLatencies: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_request_sli_duration_seconds",
			Help:    "[ALPHA] Response latency distribution (not counting webhook duration and priority & fairness queue wait times) in seconds for each verb, group, version, resource, subresource, scope and component.",
			Buckets: requestSLIBuckets,
		}, resourceLabels),
		responseSizes: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_response_sizes",
			Help:    "[STABLE] Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.",
			Buckets: responseSizeBuckets,
		}, resourceLabels),
		longRunning: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_longrunning_requests",
			Help: "[STABLE] Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.",
		}, resourceLabels),
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_current_inflight_requests",
			Help: "[STABLE] Maximal number of currently used inflight request limit of this apiserver per request kind in last second.",
		}, []string{"request_kind"}),
		tlsHandshakeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "apiserver_tls_handshake_errors_total",
			Help: "[ALPHA] Number of requests dropped with 'TLS handshake error from' error",
		}),
		watchEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_watch_events_total",
			Help: "[BETA] Number of events sent in watch clients",
		}, watchEventsLabels),
		watchEventSizes: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_watch_events_sizes",
			Help:    "[BETA] Watch event size distribution in bytes",
			Buckets: watchEventSizeBuckets,
		}, watchEventsLabels),
		requestBodySizes:      newRequestBodySizes(),
		requestFilterDuration: newRequestFilterDuration(),
		watchListLatencies: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_watch_list_duration_seconds",
			Help:    "[BETA] Response latency distribution in seconds for watch list requests broken by group, version, resource and scope.",
			Buckets: watchListBuckets,
		}, []string{"group", "version", "resource", "scope"}),
		deprecatedAPIs:  newDeprecatedAPIs(),
		fieldValidation: newFieldValidations(),
		timestamps:      newTimestampComparisons(),
		validation:      newValidationCounters(),
		series:          make(map[seriesKey]*series),
	}
	m.inflightReadOnly = m.inflight.WithLabelValues(ReadOnlyKind)
	m.inflightMutating = m.inflight.WithLabelValues(MutatingKind)
	m.inqueue = newInqueue()
	m.executing = &Watermark{vec: m.inflight}
	m.waiting = &Watermark{vec: m.inqueue}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.requests, m.latencies, m.sliLatencies, m.responseSizes,
			m.longRunning, m.inflight, m.inqueue, m.tlsHandshakeErrors, m.watchEvents, m.watchEventSizes, m.requestBodySizes, m.requestFilterDuration, m.watchListLatencies, m.deprecatedAPIs, m.fieldValidation.vec, m.timestamps.vec,
			m.validation.mismatch, m.validation.panics, m.validation.duplicates} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("register apiserver request metrics: %w", err)
			}
		}
	}
	var err error
	if m.auth, err = NewAuthMetrics(reg); err != nil {
		return nil, err
	}
	m.auth.selfRequests, m.auth.self = newSelfRequests(), map[selfKey]prometheus.Counter{}
	if reg != nil {
		if err := reg.Register(m.auth.selfRequests); err != nil {
			return nil, fmt.Errorf("register apiserver request metrics: %w", err)
		}
	}
	return m, nil
}

// Auth returns the authentication, authorization and impersonation
// metrics (nil for a nil m).
func (m *Metrics) Auth() *AuthMetrics {
	if m == nil {
		return nil
	}
	return m.auth
}

// ObserveMaxInFlight has f told each new count of the max-in-flight
// filter's limited kinds. Call it before serving (it is not synchronized
// with NoteMaxInFlight).
func (m *Metrics) ObserveMaxInFlight(f func(mutating bool, n int64)) {
	if m != nil {
		m.maxInFlightObserver = f
	}
}

// NoteMaxInFlight tells the observer set by ObserveMaxInFlight the count
// of requests of a limited kind, as upstream's max-in-flight filter
// records it after taking and after giving back a slot.
func (m *Metrics) NoteMaxInFlight(mutating bool, n int64) {
	if m != nil && m.maxInFlightObserver != nil {
		m.maxInFlightObserver(mutating, n)
	}
}

// SetInflight sets the in-flight gauge of kind (ReadOnlyKind or MutatingKind).
func (m *Metrics) SetInflight(kind string, n int) {
	if m == nil {
		return
	}
	switch kind {
	case ReadOnlyKind:
		m.inflightReadOnly.Set(float64(n))
	case MutatingKind:
		m.inflightMutating.Set(float64(n))
	default:
		m.inflight.WithLabelValues(kind).Set(float64(n))
	}
}

// TLSHandshakeError counts one failed TLS handshake.
func (m *Metrics) TLSHandshakeError() {
	if m == nil {
		return
	}
	m.tlsHandshakeErrors.Inc()
}

// WatchEventRecorder counts the events one watch sends and observes their
// sizes. The zero value records nothing.
type WatchEventRecorder struct {
	events prometheus.Counter
	sizes  prometheus.Observer
}

// WatchEvents returns the recorder of the watch events of objects of kind
// (the kind served, upstream's group, version and kind labels). Resolve it
// once per watch, not per event.
func (m *Metrics) WatchEvents(kind schema.GroupVersionKind) WatchEventRecorder {
	if m == nil {
		return WatchEventRecorder{}
	}
	return WatchEventRecorder{
		events: m.watchEvents.WithLabelValues(kind.Group, kind.Version, kind.Kind),
		sizes:  m.watchEventSizes.WithLabelValues(kind.Group, kind.Version, kind.Kind),
	}
}

// Sent records one event of size bytes written to the client.
func (r WatchEventRecorder) Sent(size int) {
	if r.events == nil {
		return
	}
	r.events.Inc()
	r.sizes.Observe(float64(size))
}

// WatchListLatency records how long a watch list (sendInitialEvents)
// took to send its initial events, from the request's arrival, under the
// resource served and the scope label.
func (m *Metrics) WatchListLatency(gvr schema.GroupVersionResource, scope string, d time.Duration) {
	if m == nil {
		return
	}
	m.watchListLatencies.WithLabelValues(gvr.Group, gvr.Version, gvr.Resource, scope).Observe(d.Seconds())
}

// seriesKey is one combination of the request labels (all but code).
type seriesKey struct {
	verb, dryRun, group, version, resource, subresource, scope, component string
}

// series are the children of one seriesKey.
type series struct {
	latency prometheus.Observer
	sli     prometheus.Observer
	size    prometheus.Observer // nil when sizes are not observed (writes)

	mu    sync.RWMutex
	codes []codeCounter // few: one per response code seen
}

type codeCounter struct {
	code    int
	counter prometheus.Counter
}

// seriesFor returns the children of k, creating them on first use.
func (m *Metrics) seriesFor(k seriesKey) *series {
	m.mu.RLock()
	s, ok := m.series[k]
	m.mu.RUnlock()
	if ok {
		return s
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.series[k]; ok {
		return s
	}
	s = &series{
		latency: m.latencies.WithLabelValues(k.verb, k.dryRun, k.group, k.version, k.resource, k.subresource, k.scope, k.component),
		sli:     m.sliLatencies.WithLabelValues(k.verb, k.group, k.version, k.resource, k.subresource, k.scope, k.component),
	}
	// Upstream observes response sizes of reads only.
	if k.verb == "GET" || k.verb == "LIST" || k.verb == "WATCH" {
		s.size = m.responseSizes.WithLabelValues(k.verb, k.group, k.version, k.resource, k.subresource, k.scope, k.component)
	}
	m.series[k] = s
	return s
}

// counter returns the apiserver_request_total child of k and code.
func (m *Metrics) counter(s *series, k seriesKey, code int) prometheus.Counter {
	s.mu.RLock()
	for _, c := range s.codes {
		if c.code == code {
			s.mu.RUnlock()
			return c.counter
		}
	}
	s.mu.RUnlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.codes {
		if c.code == code {
			return c.counter
		}
	}
	c := m.requests.WithLabelValues(k.verb, k.dryRun, k.group, k.version, k.resource, k.subresource, k.scope, k.component, codeString(code))
	s.codes = append(s.codes, codeCounter{code: code, counter: c})
	return c
}
