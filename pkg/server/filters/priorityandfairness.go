package filters

import (
	"log/slog"
	"math"
	"net/http"
	"net/textproto"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/server/flowcontrol"
	"github.com/kapi-dev/kapi/pkg/storage/watchinit"
)

// Response headers naming the FlowSchema and priority level a request was
// classified into (upstream's, set on every classified response).
const (
	FlowSchemaUIDHeader    = "X-Kubernetes-PF-FlowSchema-UID"
	PriorityLevelUIDHeader = "X-Kubernetes-PF-PriorityLevel-UID"
)

// The same in canonical form (the form http.Header.Set stores them in),
// computed once: setting them directly spares two canonicalizations (an
// allocation each) per request.
var (
	flowSchemaUIDKey    = textproto.CanonicalMIMEHeaderKey(FlowSchemaUIDHeader)
	priorityLevelUIDKey = textproto.CanonicalMIMEHeaderKey(PriorityLevelUIDHeader)
)

// Upstream's work estimator constants (k8s.io/apiserver/pkg/util/
// flowcontrol/request/config.go): a list costs a seat per 100 objects it
// processes, a mutation a seat per 10 watches it notifies, each
// notification 5ms; 1 to 10 seats.
const (
	apfMinSeats          = 1
	apfMaxSeats          = 10
	apfObjectsPerSeat    = 100
	apfWatchesPerSeat    = 10
	apfEventAdditionalMs = 5
	// apfDefaultWaitLimit bounds the queue wait of requests without a
	// deadline (watches); apfMaxWaitLimit bounds every wait (upstream's 1m).
	apfDefaultWaitLimit = 15 * time.Second
	apfMaxWaitLimit     = time.Minute
)

// ObjectCounter estimates how many objects a resource has (false:
// unknown). It is called on every list, so it must be cheap.
type ObjectCounter func(schema.GroupResource) (int64, bool)

// PriorityAndFairness configures the API Priority and Fairness filter.
type PriorityAndFairness struct {
	Controller *flowcontrol.Controller
	// ObjectCount estimates lists' width; nil: every list is one seat.
	ObjectCount ObjectCounter
	// Executing counts the requests executing (from admission to the end
	// of the handler; a watch until its initial events are sent) for
	// apiserver_current_inflight_requests; nil: not counted. The waiting
	// ones are counted by the Controller's QueueNote.
	Executing *metrics.Watermark
}

// MutatingVerb reports whether API Priority and Fairness counts a request
// of verb as mutating in apiserver_current_inflight_requests and
// apiserver_current_inqueue_requests: any verb but get, list and watch
// (upstream's rule, non-resource verbs included: a HEAD is mutating).
func MutatingVerb(verb string) bool {
	return verb != "get" && verb != "list" && verb != "watch"
}

// WithPriorityAndFairness replaces max-in-flight when
// --enable-priority-and-fairness: every request but the long-running
// non-watch ones (exec, attach, port-forward, proxy) is classified by the
// FlowSchemas, answered with the X-Kubernetes-PF-* headers, and executes
// once its priority level has seats for it (exempt levels at once). A
// rejected request gets upstream's 429: text/plain
// TooManyRequestsMessage with Retry-After: 1. A request waits in its queue
// at most a quarter of its deadline (at most a minute; 15s without one). A
// watch holds its seat until its initial events are sent (the watch
// cache's signal through watchinit; an etcd watch signals once set up, a
// proxied one when it is handed to its backend), as upstream's watch
// initialization signal.
func WithPriorityAndFairness(handler http.Handler, cfg PriorityAndFairness, isLongRunning LongRunningFunc, logger *slog.Logger) http.Handler {
	logger = orDefault(logger)
	watches := &watchCounts{}
	c := cfg.Controller
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		info, ok := request.RequestInfoFrom(ctx)
		if !ok {
			internalError(w, r, errNoRequestInfo, logger)
			return
		}
		isWatch := info.Verb == "watch"
		if !isWatch && isLongRunning(r, info) {
			handler.ServeHTTP(w, r)
			return
		}
		u, _ := request.UserFrom(ctx)
		if u == nil {
			// No authentication in the chain: classify as
			// unauthenticated (upstream requires a user).
			u = &user.Info{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}
		}
		req := flowcontrol.Request{
			User: u.Name, Groups: u.Groups,
			IsResourceRequest: info.IsResourceRequest,
			Verb:              info.Verb,
			APIGroup:          info.APIGroup, Resource: info.Resource, Subresource: info.Subresource,
			Namespace: info.Namespace,
			Path:      info.Path,
		}
		cls := c.Classify(&req)
		h := w.Header()
		h[flowSchemaUIDKey] = cls.FlowSchemaUIDValues()
		h[priorityLevelUIDKey] = cls.PriorityLevelUIDValues()

		gr := schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}
		width, watchCount, sampled := estimateWidth(r, info, gr, cfg.ObjectCount, watches)
		c.NoteEstimate(cls, width, watchCount, sampled)
		ticket, err := c.Admit(ctx, cls, width, waitLimit(r), flowcontrol.RequestDescription{
			User: u.Name, Verb: info.Verb, Path: info.Path, Namespace: info.Namespace, Name: info.Name,
			APIVersion: info.APIVersion, Resource: info.Resource, Subresource: info.Subresource,
		})
		if err != nil {
			if ctx.Err() != nil {
				// The client is gone (or the deadline passed): nobody
				// reads an answer; the timeout filter answers if needed.
				return
			}
			h.Set("Retry-After", "1")
			http.Error(w, TooManyRequestsMessage, http.StatusTooManyRequests)
			return
		}
		mutating := MutatingVerb(info.Verb)
		cfg.Executing.Note(mutating, 1)
		if !isWatch {
			defer cfg.Executing.Note(mutating, -1)
			defer ticket.Finish()
			handler.ServeHTTP(w, r)
			return
		}
		finish := sync.OnceFunc(func() {
			ticket.Finish()
			cfg.Executing.Note(mutating, -1)
		})
		defer finish()
		if info.IsResourceRequest {
			n := watches.of(gr)
			n.Add(1)
			defer n.Add(-1)
		}
		// The seat goes when storage has handed over the initial events
		// (watchinit.Initialized), or when the handler returns without
		// reaching storage, as upstream's watch initialization signal.
		handler.ServeHTTP(w, r.WithContext(watchinit.WithSignal(ctx, finish)))
	})
}

// waitLimit is how long a request may wait in its queue: a quarter of
// the time from its arrival to its deadline, at most a minute
// (upstream's getRequestWaitContext).
func waitLimit(r *http.Request) time.Duration {
	deadline, ok := r.Context().Deadline()
	if !ok {
		return apfDefaultWaitLimit
	}
	arrived := time.Now()
	if t, ok := request.ReceivedTimestampFrom(r.Context()); ok {
		arrived = t
	}
	return min(deadline.Sub(arrived)/4, apfMaxWaitLimit)
}

// estimateWidth is upstream's work estimate: lists by the objects they
// process, mutations by the watches they notify, the rest one seat. A
// mutation's watch count is returned, sampled, as upstream's estimator
// samples it (apiserver_flowcontrol_watch_count_samples): for every
// create, update, patch and delete (upstream switches on the verb alone,
// so a non-resource DELETE or PATCH samples 0 watches) except a service
// account token's, which notifies no watch.
func estimateWidth(r *http.Request, info *request.RequestInfo, gr schema.GroupResource, count ObjectCounter, watches *watchCounts) (w flowcontrol.Width, watchCount int64, sampled bool) {
	switch info.Verb {
	case "list":
		if !info.IsResourceRequest {
			break
		}
		return flowcontrol.Width{Seats: ListSeats(r, gr, count)}, 0, false
	case "create", "update", "patch", "delete":
		if info.Resource == "serviceaccounts" && info.Subresource == "token" {
			break
		}
		if info.IsResourceRequest {
			watchCount = watches.count(gr)
		}
		return mutatingWidth(watchCount), watchCount, true
	}
	return flowcontrol.Width{Seats: apfMinSeats}, 0, false
}

// ListSeats is the width of a list: one seat per 100 objects processed
// (all stored objects, or the page when a limit without selectors bounds
// it), 1 to 10; 1 when the count is unknown.
func ListSeats(r *http.Request, gr schema.GroupResource, count ObjectCounter) int {
	if count == nil {
		return apfMinSeats
	}
	stored, ok := count(gr)
	if !ok || stored <= 0 {
		return apfMinSeats
	}
	processed := stored
	q := r.URL.Query()
	if limit, err := strconv.ParseInt(q.Get("limit"), 10, 64); err == nil && limit > 0 && limit < stored &&
		q.Get("labelSelector") == "" && q.Get("fieldSelector") == "" {
		processed = limit
	}
	seats := int(math.Ceil(float64(processed) / apfObjectsPerSeat))
	return min(max(seats, apfMinSeats), apfMaxSeats)
}

// mutatingWidth: one seat while executing, then, from 10 watches on,
// ceil(watches/10) seats for 5ms (scaled up when that exceeds 10 seats)
// for the notifications (upstream's: fewer watches cost nothing after).
func mutatingWidth(watchCount int64) flowcontrol.Width {
	if watchCount < apfWatchesPerSeat {
		return flowcontrol.Width{Seats: apfMinSeats}
	}
	final := int(math.Ceil(float64(watchCount) / apfWatchesPerSeat))
	latency := apfEventAdditionalMs * time.Millisecond
	if final > apfMaxSeats {
		latency = time.Duration(float64(latency) * float64(final) / apfMaxSeats)
		final = apfMaxSeats
	}
	return flowcontrol.Width{Seats: apfMinSeats, FinalSeats: final, AdditionalLatency: latency}
}

// watchCounts counts the watches open per resource.
type watchCounts struct{ m sync.Map }

func (w *watchCounts) of(gr schema.GroupResource) *atomic.Int64 {
	if v, ok := w.m.Load(gr); ok {
		return v.(*atomic.Int64)
	}
	v, _ := w.m.LoadOrStore(gr, &atomic.Int64{})
	return v.(*atomic.Int64)
}

func (w *watchCounts) count(gr schema.GroupResource) int64 {
	if v, ok := w.m.Load(gr); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}
