package filters

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
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
// filter (no user on the context). m (nil: none) records each
// authentication's result and latency, and the authenticated user's name
// category.
func WithAuthentication(handler http.Handler, auth Authenticator, failed http.Handler, logger *slog.Logger, m *metrics.AuthMetrics) http.Handler {
	if auth == nil {
		return handler
	}
	if failed == nil {
		failed = Unauthorized()
	}
	logger = orDefault(logger)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		u, ok, err := auth.AuthenticateRequest(r)
		if m != nil {
			result, name := authenticationResult(u, ok, err)
			m.Authentication(result, name, time.Since(start))
		}
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
		if h, stripped := withoutAuthHeaders(r.Header); stripped {
			r = r.WithContext(r.Context())
			r.Header = h
		}
		if r.ProtoMajor == 2 && u.IsAnonymous() {
			w.Header().Set("Connection", "close")
		}
		if !request.StateOf(r.Context()).SetUser(u) {
			r = r.WithContext(request.WithUser(r.Context(), u))
		}
		handler.ServeHTTP(w, r)
	})
}

// ErrNoCredentials is what an authenticator answers (wrapped or not) for a
// request without credentials that may not be anonymous: a 401 like any
// refusal, counted as upstream counts it (result "failure": no
// authenticator recognised the request, where upstream's anonymous
// authenticator is simply absent), not "error".
var ErrNoCredentials = errors.New("no credentials, and anonymous authentication is not allowed for this request")

// authenticationResult is upstream's result label of an authentication and
// the user name it counts: a request without credentials that may be
// anonymous is a success as system:anonymous (upstream's anonymous
// authenticator accepts it; here the filter does).
func authenticationResult(u *user.Info, ok bool, err error) (string, string) {
	switch {
	case errors.Is(err, ErrNoCredentials):
		return metrics.AuthnFailure, ""
	case err != nil || (ok && u == nil):
		return metrics.AuthnError, ""
	case !ok:
		return metrics.AuthnSuccess, user.Anonymous
	}
	return metrics.AuthnSuccess, u.Name
}

// withoutAuthHeaders returns h without the headers an authenticated
// request loses, and whether there were any. h itself is never changed
// (a copy is made when something is removed): the request's header map
// is shared with the filters outside this one, which may still read it
// from another goroutine once the timeout filter has answered for a
// handler that is still running (the timeout filter gives the handler a
// shallow copy of the request, not a copy of its headers). The values'
// slices are shared, clipped so that an append never writes into h's.
func withoutAuthHeaders(h http.Header) (http.Header, bool) {
	n := 0
	for k := range h {
		if isAuthHeader(k) {
			n++
		}
	}
	if n == 0 {
		return h, false
	}
	c := make(http.Header, len(h)-n)
	for k, v := range h {
		if !isAuthHeader(k) {
			c[k] = v[:len(v):len(v)]
		}
	}
	return c, true
}

// isAuthHeader tells whether k, a key of a request's header map, is one
// that authentication removes: one of strippedHeaders as http.Header.Del
// would find it (the canonical form), or a key that starts with one of
// strippedHeaderPrefixes in any case (canonical keys are checked the way
// they always were; a non-canonical one, which the servers' parsers never
// produce for a valid name, is removed rather than kept).
func isAuthHeader(k string) bool {
	for _, s := range strippedHeaders {
		if k == s {
			return true
		}
	}
	for _, p := range strippedHeaderPrefixes {
		if len(k) >= len(p) && strings.EqualFold(k[:len(p)], p) {
			return true
		}
	}
	return false
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
