package filters

import (
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// PanicMessage is the body of the 500 a panicking request gets.
const PanicMessage = "This request caused apiserver to panic. Look in the logs for details."

// WithPanicRecovery turns a panic into a 500 (text/plain PanicMessage), logs
// "apiserver panic'd" with the stack, and panics again so that net/http
// aborts the response (HTTP/1.1: connection closed; HTTP/2: RST_STREAM) and
// the server goes on serving other requests (serving.md 15). A panic with
// http.ErrAbortHandler (a deliberate abort, e.g. a timeout after the
// handler wrote) is passed on with only a debug log.
func WithPanicRecovery(handler http.Handler, logger *slog.Logger) http.Handler {
	logger = orDefault(logger)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p == http.ErrAbortHandler {
				logger.Debug("timeout or abort while handling", "method", r.Method, "URI", r.RequestURI,
					"auditID", request.AuditIDFrom(r.Context()))
				panic(p)
			}
			http.Error(w, PanicMessage, http.StatusInternalServerError)
			logger.Error("apiserver panic'd", "method", r.Method, "URI", r.RequestURI,
				"auditID", request.AuditIDFrom(r.Context()), "panic", p, "stack", string(debug.Stack()))
			panic(p)
		}()
		handler.ServeHTTP(w, r)
	})
}
