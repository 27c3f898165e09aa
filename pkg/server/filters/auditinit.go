package filters

import (
	"net/http"
	"net/textproto"

	"github.com/google/uuid"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// auditIDKey is audit.HeaderAuditID in canonical form: request headers are
// stored under canonical keys, and looking one up (or setting one) under
// its canonical key directly spares the per-request canonicalization
// (an allocation, as "Audit-ID" is not canonical).
var auditIDKey = textproto.CanonicalMIMEHeaderKey(audit.HeaderAuditID)

// WithAuditInit gives every request an audit ID (the client's Audit-ID
// header, or a new UUID) and an empty audit Context, and echoes the ID in the
// Audit-Id response header unless one is already set (serving.md 14).
func WithAuditInit(handler http.Handler) http.Handler {
	return withAuditInit(handler, true)
}

// withAuditInit is WithAuditInit; with auditing false (no request can be
// audited: no backend, or a fixed policy of level None) it gives requests
// no audit Context, as nothing would ever read one: annotations and
// recorded objects are kept only for an audit event, and every audit
// function is a no-op without a Context.
func withAuditInit(handler http.Handler, auditing bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var id string
		if v := r.Header[auditIDKey]; len(v) > 0 {
			id = v[0]
		}
		if id == "" {
			id = uuid.NewString()
		}
		// The request's State: this filter and the ones after it fill it
		// in instead of adding a context (and copying the request) each.
		ctx := request.WithState(r.Context())
		s := request.StateOf(ctx)
		if auditing && !audit.SetContext(s) {
			ctx = audit.WithContext(ctx)
		}
		if !s.SetAuditID(id) {
			ctx = request.WithAuditID(ctx, id)
		}
		if h := w.Header(); len(h[auditIDKey]) == 0 || h[auditIDKey][0] == "" {
			h[auditIDKey] = []string{id}
		}
		handler.ServeHTTP(w, r.WithContext(ctx))
	})
}
