package filters

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// TimeoutMessage is the message of the 504 Status (after "Timeout: ").
const TimeoutMessage = "request did not complete within the allotted timeout"

// WithTimeout runs each non-long-running request that has a context deadline
// in its own goroutine and answers for it if the deadline (or the client's
// disconnect) comes first (serving.md 27):
//   - nothing written yet: 504 with the JSON Status
//     {"metadata":{},"status":"Failure","message":"Timeout: request did not
//     complete within the allotted timeout","reason":"Timeout","details":{},"code":504}
//     (no kind/apiVersion, no Content-Type set by the filter);
//   - the handler already wrote: the response is aborted with
//     panic(http.ErrAbortHandler) (HTTP/1.1 connection closed, HTTP/2
//     RST_STREAM).
//
// The handler writes through a ResponseWriter that drops everything after
// the timeout (Write returns http.ErrHandlerTimeout) and supports Flush. A
// panic in the handler goroutine is re-raised in the serving goroutine (with
// the handler's stack in the value) if it comes before the timeout, and only
// logged after it.
//
// The handler goroutine may outlive ServeHTTP after a timeout; it is counted
// in handlers (if not nil) until it returns, so the server can wait for it.
// Requests without a deadline are served inline.
func WithTimeout(handler http.Handler, isLongRunning LongRunningFunc, handlers *SafeWaitGroup, logger *slog.Logger) http.Handler {
	return &timeoutFilter{handler: handler, isLongRunning: isLongRunning, handlers: handlers, logger: orDefault(logger)}
}

// timeoutFilter is the handler WithTimeout returns.
type timeoutFilter struct {
	handler       http.Handler
	isLongRunning LongRunningFunc
	handlers      *SafeWaitGroup
	logger        *slog.Logger
}

func (f *timeoutFilter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.serve(r.Context(), w, r, false)
}

// serve serves r as if its context were ctx; other tells that it is not
// (ctx is then a context of r's with a deadline: the deadline filter
// passes the one it makes without copying the request for it; the
// handler's request, a copy, carries ctx).
func (f *timeoutFilter) serve(ctx context.Context, w http.ResponseWriter, r *http.Request, other bool) {
	handler, handlers, logger := f.handler, f.handlers, f.logger
	info, ok := request.RequestInfoFrom(ctx)
	if !ok {
		internalError(w, r, errNoRequestInfo, logger)
		return
	}
	if f.isLongRunning(r, info) || !hasDeadline(ctx) {
		if other {
			r = r.WithContext(ctx)
		}
		handler.ServeHTTP(w, r)
		return
	}

	tw := newTimeoutWriter(w)
	// done is closed when the handler's goroutine is through, tw.panicked
	// set (a channel of the panic value itself would be two allocations:
	// its buffer holds pointers).
	done := make(chan struct{})
	// The handler's goroutine gets a request and a State of its own:
	// what the filters after this one set is never written where this
	// goroutine reads. The request is a shallow copy (its header map and
	// URL are shared, not copied): nothing after this filter changes a
	// request's headers or URL in place (authentication and impersonation
	// make copies of the headers they remove), so this goroutine can read
	// them while a handler that outlived its timeout still runs.
	inner := r.WithContext(request.WithState(ctx))
	tracked := handlers != nil && handlers.Add(1) == nil
	go func() {
		growStack()
		defer func() {
			p := recover()
			if p != nil && p != http.ErrAbortHandler {
				p = fmt.Sprintf("%v\n%s", p, debug.Stack())
			}
			if timedOutAt, timedOut := tw.finish(); timedOut {
				logger.Info("post-timeout activity", "timeElapsed", time.Since(timedOutAt),
					"method", r.Method, "path", r.URL.Path, "panic", p)
			}
			tw.panicked = p
			close(done)
			if tracked {
				handlers.Done()
			}
		}()
		handler.ServeHTTP(tw, inner)
	}()

	select {
	case <-done:
		if p := tw.panicked; p != nil {
			panic(p)
		}
	case <-ctx.Done():
		if tw.timeout() {
			return
		}
		// The handler finished just as the deadline hit: its response
		// stands.
		<-done
		if p := tw.panicked; p != nil {
			panic(p)
		}
	}
}

func hasDeadline(ctx context.Context) bool {
	_, ok := ctx.Deadline()
	return ok
}

// timeoutWriter is the ResponseWriter of a handler run by WithTimeout. All
// access to the real writer happens under mu, and nothing reaches it after
// the timeout.
type timeoutWriter struct {
	w      http.ResponseWriter
	header http.Header // the handler's headers, copied to w at WriteHeader

	mu          sync.Mutex
	wroteHeader bool
	timedOut    bool
	timedOutAt  time.Time
	finished    bool // the handler returned

	// panicked is the handler's panic (with its stack), nil if none: set
	// by the handler's goroutine before it closes done, read by the
	// serving goroutine after.
	panicked any
}

var (
	_ http.Flusher                    = (*timeoutWriter)(nil)
	_ interface{ FlushError() error } = (*timeoutWriter)(nil)
)

func newTimeoutWriter(w http.ResponseWriter) *timeoutWriter {
	return &timeoutWriter{w: w, header: w.Header().Clone()}
}

// Header returns the handler's header map. Only the handler goroutine may
// use it.
func (tw *timeoutWriter) Header() http.Header { return tw.header }

func (tw *timeoutWriter) WriteHeader(code int) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut || tw.wroteHeader {
		return
	}
	tw.writeHeaderLocked(code)
}

func (tw *timeoutWriter) writeHeaderLocked(code int) {
	// dst becomes a copy of the handler's map. The value slices are
	// shared, not copied: the real writer snapshots its headers at
	// WriteHeader, which is called below under mu, and changes the handler
	// makes to its map afterwards (Set and Del replace or remove a slice,
	// Add appends beyond what dst sees) do not reach dst.
	dst := tw.w.Header()
	for k := range dst {
		if _, ok := tw.header[k]; !ok {
			delete(dst, k)
		}
	}
	for k, v := range tw.header {
		dst[k] = v
	}
	if code >= 200 || code == http.StatusSwitchingProtocols {
		tw.wroteHeader = true
	}
	tw.w.WriteHeader(code)
}

func (tw *timeoutWriter) Write(b []byte) (int, error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return 0, http.ErrHandlerTimeout
	}
	if !tw.wroteHeader {
		tw.writeHeaderLocked(http.StatusOK)
	}
	return tw.w.Write(b)
}

// FlushError flushes what was written so far (http.ResponseController uses
// it).
func (tw *timeoutWriter) FlushError() error {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return http.ErrHandlerTimeout
	}
	if !tw.wroteHeader {
		tw.writeHeaderLocked(http.StatusOK)
	}
	return http.NewResponseController(tw.w).Flush()
}

// Flush implements http.Flusher.
func (tw *timeoutWriter) Flush() { _ = tw.FlushError() }

// finish records that the handler returned; it reports whether (and when)
// the request had timed out before.
func (tw *timeoutWriter) finish() (time.Time, bool) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	tw.finished = true
	return tw.timedOutAt, tw.timedOut
}

// timeout ends the request on the serving goroutine. It returns false if the
// handler had already returned (its response stands), true after writing
// the 504; if the handler had started its response, it aborts it with
// panic(http.ErrAbortHandler).
func (tw *timeoutWriter) timeout() bool {
	tw.mu.Lock()
	if tw.finished {
		tw.mu.Unlock()
		return false
	}
	tw.timedOut = true
	tw.timedOutAt = time.Now()
	wrote := tw.wroteHeader
	if !wrote {
		st := apierrors.NewTimeoutError(TimeoutMessage, 0).ErrStatus
		tw.w.WriteHeader(http.StatusGatewayTimeout)
		_ = json.NewEncoder(tw.w).Encode(&st)
	}
	tw.mu.Unlock()
	if wrote {
		panic(http.ErrAbortHandler)
	}
	return true
}
