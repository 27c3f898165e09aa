package metrics

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// The filters whose latency apiserver_request_filter_duration_seconds
// measures, by upstream's names (DefaultBuildHandlerChain; impersonation
// is "constrainedimpersonation" while the ConstrainedImpersonation gate is
// on, as in v1.37 by default).
const (
	FilterAuthentication      = "authentication"
	FilterAudit               = "audit"
	FilterImpersonation       = "constrainedimpersonation"
	FilterPriorityAndFairness = "priorityandfairness"
	FilterAuthorization       = "authorization"
)

var filterNames = [...]string{FilterAuthentication, FilterAudit, FilterImpersonation, FilterPriorityAndFairness, FilterAuthorization}

// requestFilterDurationBuckets are upstream's.
var requestFilterDurationBuckets = []float64{0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 5.0, 10.0, 15.0, 30.0}

func newRequestFilterDuration() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_request_filter_duration_seconds",
		Help:    "[ALPHA] Request filter latency distribution in seconds, for each filter type",
		Buckets: requestFilterDurationBuckets,
	}, []string{"filter"})
}

// filterObservers are the children of apiserver_request_filter_duration_seconds,
// one per filter, resolved on first use (a series appears once observed).
type filterObservers struct {
	once [len(filterNames)]sync.Once
	obs  [len(filterNames)]prometheus.Observer
}

// filterID is name's id on a request's State (its index + 1; 0: not a
// measured filter).
func filterID(name string) uint8 {
	for i, n := range filterNames {
		if n == name {
			return uint8(i + 1)
		}
	}
	return 0
}

func (m *Metrics) filterObserver(id uint8) prometheus.Observer {
	i := int(id) - 1
	if i < 0 || i >= len(filterNames) {
		return nil
	}
	m.filters.once[i].Do(func() { m.filters.obs[i] = m.requestFilterDuration.WithLabelValues(filterNames[i]) })
	return m.filters.obs[i]
}

// TrackFilterStarted wraps filter (a handler whose filter is name, one of
// the Filter* names): the time the request enters it is kept on the
// request's State, for TrackFilterCompleted (upstream's
// filterlatency.TrackStarted). A nil m or a request without a State
// records nothing.
func TrackFilterStarted(filter http.Handler, m *Metrics, name string) http.Handler {
	id := filterID(name)
	if m == nil || id == 0 {
		return filter
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		request.StateFrom(r.Context()).StartFilter(id)
		filter.ServeHTTP(w, r)
	})
}

// TrackFilterCompleted wraps the handler a filter passes requests on to:
// it observes the time since the filter started in
// apiserver_request_filter_duration_seconds (upstream's
// filterlatency.TrackCompleted). A request the filter answers itself is
// not observed, as upstream's.
func TrackFilterCompleted(next http.Handler, m *Metrics) http.Handler {
	if m == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, d := request.StateFrom(r.Context()).FilterElapsed(); id != 0 {
			if o := m.filterObserver(id); o != nil {
				o.Observe(d.Seconds())
			}
		}
		next.ServeHTTP(w, r)
	})
}
