package filters

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/endpoints/responsewriters"
)

// WithRequestDeadline gives every non-long-running request a context
// deadline of received + timeout (serving.md 26). A `?timeout=` in
// (0, timeout) shortens it; <= 0 or >= timeout keeps timeout. An unparsable
// value answers 400 BadRequest `invalid timeout specified in the request URL
// - time: invalid duration "<v>"`. timeout <= 0 means no server maximum
// (then only a positive ?timeout= sets a deadline).
func WithRequestDeadline(handler http.Handler, timeout time.Duration, isLongRunning LongRunningFunc, logger *slog.Logger) http.Handler {
	logger = orDefault(logger)
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
		if v := r.URL.Query().Get("timeout"); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				st := apierrors.NewBadRequest(fmt.Sprintf("invalid timeout specified in the request URL - %v", err)).ErrStatus
				responsewriters.WriteStatus(w, &st)
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
		ctx, cancel := context.WithDeadline(ctx, started.Add(limit))
		defer cancel()
		handler.ServeHTTP(w, r.WithContext(ctx))
	})
}
