package metrics

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// BodyVerb is the verb label of apiserver_request_body_size_bytes
// (upstream's handlers/metrics RequestBodyVerb).
type BodyVerb int

// The body verbs.
const (
	BodyCreate BodyVerb = iota
	BodyUpdate
	BodyPatch
	BodyDelete
	BodyDeleteCollection
	numBodyVerbs
)

var bodyVerbNames = [numBodyVerbs]string{"create", "update", "patch", "delete", "delete_collection"}

// requestBodySizeBuckets are 50 KB to 3.05 MB by 100 KB
// (LinearBuckets(50000, 100000, 31)), upstream's.
var requestBodySizeBuckets = prometheus.LinearBuckets(50000, 100000, 31)

func newRequestBodySizes() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_request_body_size_bytes",
		Help:    "[ALPHA] Apiserver request body size in bytes broken out by resource and verb.",
		Buckets: requestBodySizeBuckets,
	}, []string{"group", "resource", "verb"})
}

func newSelfRequests() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_selfrequest_total",
		Help: "[ALPHA] Counter of apiserver self-requests broken out for each verb, API resource and subresource.",
	}, []string{"verb", "group", "resource", "subresource"})
}

// BodySizes observes the request bodies a handler reads for one resource
// (apiserver_request_body_size_bytes), with the child of each verb
// resolved on its first use. A nil *BodySizes records nothing; methods are
// safe for concurrent use.
type BodySizes struct {
	vec             *prometheus.HistogramVec
	group, resource string

	once [numBodyVerbs]sync.Once
	obs  [numBodyVerbs]prometheus.Observer
}

// BodySizes returns the recorder of resource's request bodies (its group
// and resource labels; subresources count as their resource, as upstream's
// scope.Resource). Resolve it once per handler, not per request.
func (m *Metrics) BodySizes(group, resource string) *BodySizes {
	if m == nil {
		return nil
	}
	return &BodySizes{vec: m.requestBodySizes, group: group, resource: resource}
}

// Observe records one body of size bytes read for verb; upstream records
// a body once it is read in full and within the limit.
func (b *BodySizes) Observe(verb BodyVerb, size int) {
	if b == nil || verb < 0 || verb >= numBodyVerbs {
		return
	}
	b.once[verb].Do(func() { b.obs[verb] = b.vec.WithLabelValues(b.group, b.resource, bodyVerbNames[verb]) })
	b.obs[verb].Observe(float64(size))
}

// SelfRequest counts one request of the server's own loopback clients
// (user system:apiserver) in apiserver_selfrequest_total, by the verb,
// group, resource and subresource labels of apiserver_request_total.
// Upstream counts it where it records the request, with the user the
// handler sees (after impersonation); kapi's callers count it once the
// request is authorized. info may be nil.
func (m *AuthMetrics) SelfRequest(r *http.Request, info *request.RequestInfo) {
	if m == nil || m.selfRequests == nil {
		return
	}
	k, ok := requestKey(r, info)
	if !ok {
		return
	}
	sk := selfKey{verb: k.verb, group: k.group, resource: k.resource, subresource: k.subresource}
	m.selfMu.RLock()
	c, ok := m.self[sk]
	m.selfMu.RUnlock()
	if !ok {
		m.selfMu.Lock()
		if c, ok = m.self[sk]; !ok {
			c = m.selfRequests.WithLabelValues(k.verb, k.group, k.resource, k.subresource)
			m.self[sk] = c
		}
		m.selfMu.Unlock()
	}
	c.Inc()
}

// selfKey is one series of apiserver_selfrequest_total.
type selfKey struct {
	verb, group, resource, subresource string
}
