package filters

import (
	"net/http"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// WithMuxAndDiscoveryComplete marks the context of every request that arrives
// before signal is closed as "incomplete" (serving.md 16), so that the
// not-found handler answers 503 instead of 404 for it. A nil signal marks
// nothing.
func WithMuxAndDiscoveryComplete(handler http.Handler, signal <-chan struct{}) http.Handler {
	if signal == nil {
		return handler
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-signal:
		default:
			if !request.StateOf(r.Context()).SetMuxIncomplete() {
				r = r.WithContext(request.WithMuxIncomplete(r.Context()))
			}
		}
		handler.ServeHTTP(w, r)
	})
}
