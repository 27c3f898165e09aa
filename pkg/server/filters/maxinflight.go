package filters

import (
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// TooManyRequestsMessage is the body (before the newline) of the
// max-in-flight 429.
const TooManyRequestsMessage = "Too many requests, please try again later."

// WithMaxInFlightLimit bounds concurrent requests: nonMutating for
// get/list/watch (request.IsReadOnly), mutating for the rest; 0 means
// unlimited (serving.md 30). Over the limit a request gets 429 text/plain
// TooManyRequestsMessage with Retry-After: 1, as upstream writes it (a
// plain http.Error, not a Status). Long-running requests and members of
// system:masters are never rejected. The in-flight gauges of m follow the
// counts. Both limits 0: no filter.
func WithMaxInFlightLimit(handler http.Handler, nonMutating, mutating int, isLongRunning LongRunningFunc, m *metrics.Metrics, logger *slog.Logger) http.Handler {
	if nonMutating == 0 && mutating == 0 {
		return handler
	}
	logger = orDefault(logger)
	readOnly := newInflightPool(nonMutating, metrics.ReadOnlyKind, m)
	mutatingPool := newInflightPool(mutating, metrics.MutatingKind, m)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, ok := request.RequestInfoFrom(r.Context())
		if !ok {
			internalError(w, r, errNoRequestInfo, logger)
			return
		}
		if isLongRunning(r, info) {
			handler.ServeHTTP(w, r)
			return
		}
		pool := mutatingPool
		if request.IsReadOnly(info) {
			pool = readOnly
		}
		if pool.acquire() {
			defer pool.release()
			handler.ServeHTTP(w, r)
			return
		}
		if u, ok := request.UserFrom(r.Context()); ok && u.InGroup(user.SystemPrivileged) {
			handler.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Retry-After", "1")
		http.Error(w, TooManyRequestsMessage, http.StatusTooManyRequests)
	})
}

// inflightPool is a counting semaphore; limit 0 admits everything.
type inflightPool struct {
	slots chan struct{} // nil: unlimited
	n     atomic.Int64
	kind  string
	m     *metrics.Metrics
}

func newInflightPool(limit int, kind string, m *metrics.Metrics) *inflightPool {
	p := &inflightPool{kind: kind, m: m}
	if limit > 0 {
		p.slots = make(chan struct{}, limit)
	}
	return p
}

func (p *inflightPool) acquire() bool {
	if p.slots != nil {
		select {
		case p.slots <- struct{}{}:
		default:
			return false
		}
	}
	n := p.n.Add(1)
	p.m.SetInflight(p.kind, int(n))
	if p.slots != nil {
		p.m.NoteMaxInFlight(p.kind == metrics.MutatingKind, n)
	}
	return true
}

func (p *inflightPool) release() {
	n := p.n.Add(-1)
	p.m.SetInflight(p.kind, int(n))
	if p.slots != nil {
		<-p.slots
		p.m.NoteMaxInFlight(p.kind == metrics.MutatingKind, n)
	}
}
