package filters

import (
	"math/rand/v2"
	"net/http"
)

// WithProbabilisticGoaway sets `Connection: close` on an HTTP/2 request's
// response with probability chance (--goaway-chance), which makes Go's
// HTTP/2 server send GOAWAY after it: clients reconnect, which spreads
// them across API servers behind a load balancer (serving.md 23).
// chance <= 0: no filter. random returns a float in [0, 1); nil means
// math/rand/v2.Float64.
func WithProbabilisticGoaway(handler http.Handler, chance float64, random func() float64) http.Handler {
	if chance <= 0 {
		return handler
	}
	if random == nil {
		random = rand.Float64
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && random() < chance {
			w.Header().Set("Connection", "close")
		}
		handler.ServeHTTP(w, r)
	})
}
