package filters

import (
	"log/slog"
	"net/http"
	"net/textproto"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// Authenticator finds who made a request. It returns ok=false with a nil
// error when the request carries no credentials it understands, and an
// error when it carries bad ones.
type Authenticator interface {
	AuthenticateRequest(r *http.Request) (*user.Info, bool, error)
}

// Headers removed from an authenticated request so that nothing further in
// (proxies to aggregated servers, kubelets) can reuse them (serving.md 30).
var (
	strippedHeaders        = []string{"Authorization", "X-Remote-User", "X-Remote-Uid", "X-Remote-Group"}
	strippedHeaderPrefixes = []string{"X-Remote-Extra-"}
)

// WithAuthentication puts the request's user on its context (serving.md 30):
//   - credentials the authenticator rejects (an error, or a nil user with
//     ok): failed answers (Unauthorized() if nil);
//   - no credentials: the anonymous user system:anonymous, groups
//     [system:unauthenticated];
//   - then the Authorization and X-Remote-* headers are removed.
//
// Over HTTP/2, a 401 or an anonymous request also gets Connection: close,
// which makes Go end the connection with GOAWAY after this stream
// (UnauthenticatedHTTP2DOSMitigation). A nil authenticator disables the
// filter (no user on the context).
func WithAuthentication(handler http.Handler, auth Authenticator, failed http.Handler, logger *slog.Logger) http.Handler {
	if auth == nil {
		return handler
	}
	if failed == nil {
		failed = Unauthorized()
	}
	logger = orDefault(logger)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok, err := auth.AuthenticateRequest(r)
		if err != nil || (ok && u == nil) {
			if err != nil {
				logger.Info("unable to authenticate the request", "method", r.Method, "URI", r.RequestURI, "err", err)
			}
			if r.ProtoMajor == 2 {
				w.Header().Set("Connection", "close")
			}
			failed.ServeHTTP(w, r)
			return
		}
		if !ok {
			u = &user.Info{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}
		}
		stripAuthHeaders(r.Header)
		if r.ProtoMajor == 2 && u.IsAnonymous() {
			w.Header().Set("Connection", "close")
		}
		if !request.StateOf(r.Context()).SetUser(u) {
			r = r.WithContext(request.WithUser(r.Context(), u))
		}
		handler.ServeHTTP(w, r)
	})
}

func stripAuthHeaders(h http.Header) {
	for _, k := range strippedHeaders {
		h.Del(k)
	}
	for k := range h {
		for _, p := range strippedHeaderPrefixes {
			if strings.HasPrefix(textproto.CanonicalMIMEHeaderKey(k), p) {
				delete(h, k)
			}
		}
	}
}

// Unauthorized answers 401 with Status message "Unauthorized", reason
// Unauthorized.
func Unauthorized() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := apierrors.NewUnauthorized("Unauthorized").ErrStatus
		handlers.WriteStatusNegotiated(w, r, &st)
	})
}

// WithFailedAuthenticationAudit records requests that failed authentication
// as upstream does: one event at stage ResponseStarted with the response
// code and no user. m (nil: none) counts the level and the event.
func WithFailedAuthenticationAudit(failed http.Handler, backend audit.Backend, policy audit.PolicyEvaluator, m *audit.Metrics) http.Handler {
	return withFailedRequestAudit(failed, backend, policy, m)
}

// withFailedRequestAudit audits a request that failed answers before the
// audit filter runs (upstream's withFailedRequestAudit and
// WithFailedAuthenticationAudit): one event at stage ResponseStarted.
func withFailedRequestAudit(failed http.Handler, backend audit.Backend, policy audit.PolicyEvaluator, m *audit.Metrics) http.Handler {
	if auditOff(backend, policy) {
		return failed
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, ac := auditContext(r)
		ac.Begin(newAuditEvent(r), policy.EvaluatePolicyRule(auditAttributes(r)), backend, m)
		failed.ServeHTTP(&auditResponseWriter{ResponseWriter: w, ac: ac, emitStarted: true}, r)
	})
}
