package filters

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// WithAuditInit gives every request an audit ID (the client's Audit-ID
// header, or a new UUID) and an empty audit Context, and echoes the ID in the
// Audit-Id response header unless one is already set (serving.md 14).
func WithAuditInit(handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(audit.HeaderAuditID)
		if id == "" {
			id = uuid.NewString()
		}
		ctx := request.WithAuditID(audit.WithContext(r.Context()), id)
		if w.Header().Get(audit.HeaderAuditID) == "" {
			w.Header().Set(audit.HeaderAuditID, id)
		}
		handler.ServeHTTP(w, r.WithContext(ctx))
	})
}
