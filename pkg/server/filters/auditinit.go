package filters

import (
	"crypto/rand"
	"net/http"
	"net/textproto"
	"sync"

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
			id = auditIDs.newString()
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

// auditIDs makes the audit IDs of requests that bring none.
var auditIDs uuidSource

// uuidSource makes random (version 4) UUIDs, as uuid.NewString does, from
// random bytes read for 64 of them at a time: uuid.NewString reads 16
// bytes from crypto/rand per UUID into a UUID it allocates (the reader is
// an interface), for each request. Its package-wide pool
// (uuid.EnableRandPool) is not safe to turn on while others use the
// package.
type uuidSource struct {
	mu  sync.Mutex
	buf [64 * 16]byte
	pos int // next unused byte of buf; 0 before the first read
}

func (s *uuidSource) newString() string {
	var u uuid.UUID
	s.mu.Lock()
	if s.pos == 0 || s.pos == len(s.buf) {
		_, _ = rand.Read(s.buf[:]) // never fails (crypto/rand.Read's contract)
		s.pos = 0
	}
	copy(u[:], s.buf[s.pos:s.pos+len(u)])
	s.pos += len(u)
	s.mu.Unlock()
	u[6] = (u[6] & 0x0f) | 0x40 // version 4
	u[8] = (u[8] & 0x3f) | 0x80 // variant RFC 4122
	return u.String()
}
