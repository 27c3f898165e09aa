package filters

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// RequestInfoResolver parses a request into a RequestInfo
// (*request.Resolver is one).
type RequestInfoResolver interface {
	Resolve(r *http.Request) (*request.RequestInfo, error)
}

// WithRequestInfo stores the request's RequestInfo on its context. A parse
// error answers 500 `Internal Server Error: "<uri>": failed to create
// RequestInfo: <err>` (serving.md 18).
func WithRequestInfo(handler http.Handler, resolver RequestInfoResolver, logger *slog.Logger) http.Handler {
	logger = orDefault(logger)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, err := resolver.Resolve(r)
		if err != nil {
			internalError(w, r, fmt.Errorf("failed to create RequestInfo: %w", err), logger)
			return
		}
		if !request.StateOf(r.Context()).SetRequestInfo(info) {
			r = r.WithContext(request.WithRequestInfo(r.Context(), info))
		}
		handler.ServeHTTP(w, r)
	})
}
