package filters

import (
	"log/slog"
	"net/http"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
)

// WithWarningRecorder lets handlers add Warning headers through
// warning.AddWarning (serving.md 28): it puts a warning.HeaderRecorder on
// the request context. It must sit inside WithTimeout, so that the headers
// go to the handler's own header map.
func WithWarningRecorder(handler http.Handler, logger *slog.Logger) http.Handler {
	logger = orDefault(logger)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := warning.NewHeaderRecorder(w.Header(), logger)
		if !warning.SetRecorder(request.StateOf(r.Context()), rec) {
			r = r.WithContext(warning.WithRecorder(r.Context(), rec))
		}
		handler.ServeHTTP(w, r)
	})
}
