package filters

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// WithRequestDeadline gives every non-long-running request a context
// deadline of received + timeout (serving.md 26). A `?timeout=` in
// (0, timeout) shortens it; <= 0 or >= timeout keeps timeout. An unparsable
// value answers 400 BadRequest `invalid timeout specified in the request URL
// - time: invalid duration "<v>"`. timeout <= 0 means no server maximum
// (then only a positive ?timeout= sets a deadline).
func WithRequestDeadline(handler http.Handler, timeout time.Duration, isLongRunning LongRunningFunc, logger *slog.Logger) http.Handler {
	return WithRequestDeadlineAudited(handler, timeout, isLongRunning, nil, nil, nil, logger)
}

// WithRequestDeadlineAudited is WithRequestDeadline whose 400 for an
// unparsable ?timeout= is audited under policy as upstream's
// withFailedRequestAudit does: the filter runs before authentication, so
// the request has one event, at stage ResponseStarted, with no user and
// the Status as responseStatus and responseObject. A nil backend or policy
// audits nothing; m (nil: none) counts the level and the event.
func WithRequestDeadlineAudited(handler http.Handler, timeout time.Duration, isLongRunning LongRunningFunc, backend audit.Backend, policy audit.PolicyEvaluator, m *audit.Metrics, logger *slog.Logger) http.Handler {
	logger = orDefault(logger)
	next, _ := handler.(*timeoutFilter)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		info, ok := request.RequestInfoFrom(ctx)
		if !ok {
			internalError(w, r, errNoRequestInfo, logger)
			return
		}
		if isLongRunning(r, info) {
			handler.ServeHTTP(w, r)
			return
		}
		limit := timeout
		if v := queryValue(r.URL, "timeout"); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				st := apierrors.NewBadRequest(fmt.Sprintf("invalid timeout specified in the request URL - %v", err)).ErrStatus
				withFailedRequestAudit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					handlers.WriteStatusNegotiated(w, r, &st)
				}), backend, policy, m).ServeHTTP(w, r)
				return
			}
			if d > 0 && (timeout <= 0 || d < timeout) {
				limit = d
			}
		}
		if limit <= 0 {
			handler.ServeHTTP(w, r)
			return
		}
		started, ok := request.ReceivedTimestampFrom(ctx)
		if !ok {
			started = time.Now()
		}
		deadline := started.Add(limit)
		ctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		if next != nil && !hasBody(r) {
			// The timeout filter copies the request for its handler
			// anyway: it takes the context as it is.
			next.serve(ctx, w, r, true)
			return
		}
		r = r.WithContext(ctx)
		if b := boundBody(w, r, deadline); b != nil {
			defer b.end()
		}
		handler.ServeHTTP(w, r)
	})
}

// hasBody reports whether r may have a body (what boundBody bounds).
func hasBody(r *http.Request) bool {
	return r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
}

// bodyReadGrace is how long after the request's deadline reads of its
// body fail. The timeout filter answers 504 at the deadline itself; were
// the body's read to fail at the same instant, the handler could answer
// first and the timeout filter, finding a response started, would abort
// it (a reset stream instead of the 504).
const bodyReadGrace = time.Second

// boundBody makes reads of r's body fail bodyReadGrace after deadline
// (serving.md 26 bounds the whole request, its body included): a client
// that sends its body slowly, or stops sending it, cannot hold the
// handler, nor the connection, past the request's deadline. The timeout
// filter answers 504 at the deadline; the handler's read fails just
// after, so its goroutine ends instead of waiting on the client.
//
// It uses the connection's (HTTP/1.1) or stream's (HTTP/2) read deadline.
// On HTTP/1.1 that deadline also governs the read net/http starts once the
// body is consumed (to notice a client going away); left in place, it
// would fire there too and cancel the whole connection's context, so it is
// lifted as soon as the body has been read to its end. It is only ever
// changed while the request is being served (the returned bound's end
// stops that), since the response writer is not usable afterwards. nil
// means no bound: no body, or a writer without deadlines.
func boundBody(w http.ResponseWriter, r *http.Request, deadline time.Time) *bodyBound {
	if !hasBody(r) {
		return nil
	}
	b := &bodyBound{rc: http.NewResponseController(w), active: true}
	expires := deadline.Add(bodyReadGrace)
	if err := b.rc.SetReadDeadline(expires); err != nil {
		return nil
	}
	r.Body = &boundedBody{ReadCloser: r.Body, bound: b, expires: expires}
	return b
}

// bodyBound is the read deadline of one request's body.
type bodyBound struct {
	rc *http.ResponseController

	mu     sync.Mutex
	active bool // the request is being served and the deadline is set
}

// lift removes the deadline once the body is fully read.
func (b *bodyBound) lift() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.active {
		b.active = false
		_ = b.rc.SetReadDeadline(time.Time{})
	}
}

// end is called when the request has been served: the deadline is left
// as it is (a body not read to its end must not be waited for by the
// server either) and never touched again.
func (b *bodyBound) end() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.active = false
}

// boundedBody lifts its bound at the end of the body. Once a read failed
// (the bound's deadline, or the connection), it is not read again, and
// closing it is left to the server: see Close.
type boundedBody struct {
	io.ReadCloser
	bound   *bodyBound
	expires time.Time // the bound's read deadline

	failed atomic.Bool // a read returned an error other than io.EOF
	eof    atomic.Bool // a read returned io.EOF
}

// errBodyExpired is what a read of a bound body gets once its bound's
// deadline has passed: the connection's own read would fail the same way.
var errBodyExpired = fmt.Errorf("reading the request body: %w", os.ErrDeadlineExceeded)

// Read reads the body. After a failed read, or past the bound's deadline
// while the body is still unread, it fails without reading: the request
// was answered at its deadline already, and on HTTP/1.1 a read in flight
// when net/http finishes the request makes net/http clear the
// connection's read deadline (to abort the read), after which its own
// discard of the unread body would wait for the client. Only a handler
// that first reads its body a second after its deadline (behind a slow
// authentication webhook, say) could start such a read.
func (b *boundedBody) Read(p []byte) (int, error) {
	if b.failed.Load() || (!b.eof.Load() && time.Now().After(b.expires)) {
		b.failed.Store(true)
		return 0, errBodyExpired
	}
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		if errors.Is(err, io.EOF) {
			b.eof.Store(true)
			b.bound.lift()
		} else {
			b.failed.Store(true)
		}
	}
	return n, err
}

// Close closes the body unless a read of it failed. On HTTP/1.1, a 504
// of the timeout filter for a body not read to its end is written by
// net/http once the handler's read fails (it discards an unread body
// before it writes a response, under the lock the handler's read holds):
// it looks whether the body was closed, then reads what is left, which
// fails on the bound's deadline and closes the connection. A handler
// closing the body between those two steps (the REST handlers' readBody
// closes it as soon as its read failed, on another goroutine than the
// 504's) made that read end with ErrBodyReadAfterClose, which net/http
// takes for a body read to its end: it kept the connection and waited for
// the next request in the body's unread rest (CI, session 28: internal/app
// TestStalledBodyIsAnsweredAtTheDeadline, about 1 run in 20 here). The
// server closes the request body itself once the handler returned.
func (b *boundedBody) Close() error {
	if b.failed.Load() {
		return nil
	}
	return b.ReadCloser.Close()
}

// queryValue is u.Query().Get(key), without parsing (and making a map
// for) an empty query: most requests have none.
func queryValue(u *url.URL, key string) string {
	if u.RawQuery == "" {
		return ""
	}
	return u.Query().Get(key)
}
