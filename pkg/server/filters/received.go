package filters

import (
	"net/http"
	"time"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// WithRequestReceivedTimestamp records when the request arrived (serving.md
// 17); the request deadline is measured from it.
func WithRequestReceivedTimestamp(handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		if !request.StateOf(r.Context()).SetReceivedTimestamp(now) {
			r = r.WithContext(request.WithReceivedTimestamp(r.Context(), now))
		}
		handler.ServeHTTP(w, r)
	})
}
