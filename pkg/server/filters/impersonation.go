package filters

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/textproto"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/endpoints/responsewriters"
)

// impersonateHeaderPrefix starts every impersonation header upstream
// defines: Impersonate-User, Impersonate-Group, Impersonate-Uid and
// Impersonate-Extra-<key> (k8s.io/api/authentication/v1).
const impersonateHeaderPrefix = "Impersonate-"

// WithImpersonationRefused answers 403 Forbidden to any request carrying
// an Impersonate-* header. kapi does not implement impersonation yet;
// serving such a request as the authenticated caller would silently do
// something other than what the client asked (e.g. `kubectl --as=bob`
// acting with the caller's own rights), so it is refused, with a message
// that says why. The Status and a forbid decision are recorded in the
// audit event.
//
// It sits where upstream's impersonation filter does: inside
// authentication and audit (so a request without credentials is still a
// 401, and the refusal is audited), outside max-in-flight and
// authorization.
func WithImpersonationRefused(handler http.Handler, logger *slog.Logger) http.Handler {
	logger = orDefault(logger)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		headers := impersonationHeaders(r.Header)
		if len(headers) == 0 {
			handler.ServeHTTP(w, r)
			return
		}
		caller := ""
		if u, ok := request.UserFrom(r.Context()); ok && u != nil {
			caller = u.Name
		}
		logger.Debug("impersonation refused", "URI", r.RequestURI, "user", caller, "headers", headers)
		st := apierrors.NewForbidden(schema.GroupResource{Resource: "users"}, r.Header.Get("Impersonate-User"),
			fmt.Errorf("impersonation is not supported by this server: the request carries %s and was refused rather than served as %q",
				strings.Join(headers, ", "), caller)).ErrStatus
		audit.AddAnnotation(r.Context(), DecisionAnnotationKey, decisionForbid)
		audit.AddAnnotation(r.Context(), ReasonAnnotationKey, "impersonation is not supported")
		audit.LogResponseStatus(r.Context(), &st)
		responsewriters.WriteStatus(w, &st)
	})
}

// impersonationHeaders returns the canonical names of the Impersonate-*
// headers in h, sorted.
func impersonationHeaders(h http.Header) []string {
	var out []string
	for k := range h {
		if ck := textproto.CanonicalMIMEHeaderKey(k); strings.HasPrefix(ck, impersonateHeaderPrefix) {
			out = append(out, ck)
		}
	}
	slices.Sort(out)
	return out
}
