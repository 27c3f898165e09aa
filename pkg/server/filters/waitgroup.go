package filters

import (
	"log/slog"
	"net/http"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// WithWaitGroup counts every non-long-running request in wg while it is
// served, so that shutdown can drain them (serving.md 25). Once wg.Wait has
// begun, a new request gets the 503 of lifecycle.md 22 (Retry-After: 1,
// Status ServiceUnavailable "apiserver is shutting down"), except the
// exempt ones of lifecycle.md 24, which are served without being counted.
// A nil wg disables the filter.
func WithWaitGroup(handler http.Handler, isLongRunning LongRunningFunc, wg *SafeWaitGroup, logger *slog.Logger) http.Handler {
	if wg == nil {
		return handler
	}
	logger = orDefault(logger)
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
		gen, err := wg.Enter()
		if err != nil {
			if isExemptFromShutdown(r) {
				handler.ServeHTTP(w, r)
				return
			}
			writeShuttingDown(w)
			return
		}
		defer wg.Leave(gen)
		handler.ServeHTTP(w, r)
	})
}
