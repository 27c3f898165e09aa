package filters

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/impersonation"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// impersonateHeaderPrefix starts every impersonation header upstream
// defines: Impersonate-User, Impersonate-Group, Impersonate-Uid and
// Impersonate-Extra-<key> (k8s.io/api/authentication/v1).
const impersonateHeaderPrefix = "Impersonate-"

// serviceAccountPrefix starts a service account's user name.
const serviceAccountPrefix = "system:serviceaccount:"

// WithImpersonation serves a request carrying Impersonate-* headers as the
// user they name, once the caller is authorized to impersonate it, as
// upstream's filter with constrained impersonation (on by default since
// v1.36; see package pkg/auth/impersonation): the constrained modes
// (impersonate:<mode> on the user and impersonate-on:<mode>:<verb> on the
// request) are tried before the legacy one (the verb impersonate on
// users/<name> or serviceaccounts/<name> in its namespace, groups/<group>,
// userextras/<key> named by the value and uids/<uid>, the last two in
// authentication.k8s.io). A refusal is upstream's 403 for the first
// denied attributes. The impersonated user gets system:authenticated (or
// system:unauthenticated for system:anonymous), a service account its
// groups when no group is asked for; the headers are removed and the
// impersonated user is recorded in the audit event.
//
// Group, Uid or Extra headers without Impersonate-User are upstream's 400
// ("requested &user.DefaultInfo{...} without impersonating a user name").
// A refusal adds no authorization annotations to the audit event (upstream
// answers with the error alone); an allowed constrained impersonation
// records its verb as the event's
// authenticationMetadata.impersonationConstraint. The decisions are
// remembered as upstream's (impersonation.Tracker): the mode that last
// allowed a requestor is tried first, and constrained modes' allowed
// impersonations are reused for 10 seconds.
//
// It sits where upstream's does: inside authentication and audit, outside
// max-in-flight and authorization. A nil authz disables impersonation
// checks (the headers are then honoured for anyone: only with
// authorization disabled).
//
// m (nil: none) records each checked impersonation (mode and decision, as
// upstream's constrained impersonation filter) and each authorization check
// it makes; without authz nothing is checked and nothing recorded.
func WithImpersonation(handler http.Handler, authz authorizer.Authorizer, logger *slog.Logger, m *metrics.AuthMetrics) http.Handler {
	logger = orDefault(logger)
	tracker := impersonation.NewTracker()
	if authz != nil && m != nil {
		authz = impersonationChecks{authz, m}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(impersonationHeaders(r.Header)) == 0 {
			handler.ServeHTTP(w, r)
			return
		}
		ctx := r.Context()
		caller, _ := request.UserFrom(ctx)
		wanted, err := wantedUser(r.Header)
		if err != nil {
			st := apierrors.NewBadRequest(err.Error()).ErrStatus
			handlers.WriteStatusNegotiatedNoSniff(w, r, &st)
			return
		}
		if wanted == nil { // Impersonate-* headers, none of them upstream's
			handler.ServeHTTP(w, r)
			return
		}
		var as *user.Info
		constraint := ""
		if authz == nil {
			as = legacyUnchecked(*wanted)
		} else {
			// The request's own attributes, for the constrained modes'
			// impersonate-on:<mode>:<verb> checks.
			reqAttrs, _ := AttributesFrom(r)
			var denied *impersonation.Denied
			start := time.Now()
			as, constraint, denied = tracker.Check(ctx, authz, caller, *wanted, reqAttrs)
			if denied != nil {
				m.Impersonation("", "denied", time.Since(start))
			} else {
				m.Impersonation(metrics.ImpersonationMode(constraint), "allowed", time.Since(start))
			}
			if denied != nil {
				// Upstream answers with the error alone: no authorization
				// annotations on the audit event.
				logger.Debug("impersonation forbidden", "URI", r.RequestURI, "reason", denied.Reason)
				handlers.WriteStatusNegotiatedNoSniff(w, r, Forbidden(denied.Attributes, denied.Reason))
				return
			}
		}
		audit.LogImpersonatedUser(ctx, authnv1.UserInfo{Username: as.Name, UID: as.UID, Groups: as.Groups, Extra: toExtra(as.Extra)}, constraint)
		r = r.Clone(request.WithUser(ctx, as))
		// Upstream removes the headers it understands; others stay.
		for _, h := range impersonationHeaders(r.Header) {
			if h == authnv1.ImpersonateUserHeader || h == authnv1.ImpersonateUIDHeader || h == authnv1.ImpersonateGroupHeader ||
				strings.HasPrefix(h, authnv1.ImpersonateUserExtraHeaderPrefix) {
				r.Header.Del(h)
			}
		}
		handler.ServeHTTP(w, r)
	})
}

// legacyUnchecked is the user impersonated without authorization (no
// authorizer): as asked, with a service account's groups when none are
// asked for, and system:authenticated (system:unauthenticated for
// anonymous), as upstream's legacy mode.
func legacyUnchecked(w impersonation.Wanted) *user.Info {
	u := &user.Info{Name: w.Name, UID: w.UID, Groups: slices.Clone(w.Groups), Extra: w.Extra}
	if ns, _, ok := splitServiceAccount(w.Name); ok && len(w.Groups) == 0 {
		u.Groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns}
	}
	switch {
	case u.Name == user.Anonymous:
		if !slices.Contains(u.Groups, user.AllUnauthenticated) {
			u.Groups = append(u.Groups, user.AllUnauthenticated)
		}
	case !slices.Contains(u.Groups, user.AllUnauthenticated) && !slices.Contains(u.Groups, user.AllAuthenticated):
		u.Groups = append(u.Groups, user.AllAuthenticated)
	}
	return u
}

func toExtra(m map[string][]string) map[string]authnv1.ExtraValue {
	if m == nil {
		return nil
	}
	out := make(map[string]authnv1.ExtraValue, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// wantedUser is the user the Impersonate-* headers ask for, as upstream's
// processImpersonationHeaders: Impersonate-User, its first
// Impersonate-Uid, every Impersonate-Group and Impersonate-Extra-<key>
// (the key lower-cased and %-unescaped; a header without values is
// skipped). nil when no user (and nothing else) is asked for; an error,
// with upstream's message, when groups, a uid or extras are asked for
// without a user.
func wantedUser(h http.Header) (*impersonation.Wanted, error) {
	w := &impersonation.Wanted{Name: h.Get(authnv1.ImpersonateUserHeader), UID: h.Get(authnv1.ImpersonateUIDHeader)}
	w.Groups = append(w.Groups, h.Values(authnv1.ImpersonateGroupHeader)...)
	hasExtra := false
	for k, values := range h {
		ck := textproto.CanonicalMIMEHeaderKey(k)
		if !strings.HasPrefix(ck, authnv1.ImpersonateUserExtraHeaderPrefix) {
			continue
		}
		hasExtra = true
		if len(values) == 0 {
			continue
		}
		raw := strings.ToLower(k[len(authnv1.ImpersonateUserExtraHeaderPrefix):])
		key, err := url.PathUnescape(raw)
		if err != nil {
			key = raw // kept as sent, as upstream
		}
		if w.Extra == nil {
			w.Extra = map[string][]string{}
		}
		w.Extra[key] = append(w.Extra[key], values...)
	}
	if w.Name == "" {
		if w.UID != "" || len(w.Groups) > 0 || hasExtra {
			return nil, fmt.Errorf("requested %s without impersonating a user name", goSyntax(w))
		}
		return nil, nil
	}
	return w, nil
}

// goSyntax is how upstream's message prints the wanted user: Go's %#v of
// its user.DefaultInfo.
func goSyntax(w *impersonation.Wanted) string {
	return fmt.Sprintf("&user.DefaultInfo{Name:%#v, UID:%#v, Groups:%#v, Extra:%#v}", w.Name, w.UID, w.Groups, w.Extra)
}

// splitServiceAccount splits system:serviceaccount:<ns>:<name>.
func splitServiceAccount(name string) (ns, sa string, ok bool) {
	rest, found := strings.CutPrefix(name, serviceAccountPrefix)
	if !found {
		return "", "", false
	}
	ns, sa, ok = strings.Cut(rest, ":")
	if !ok || ns == "" || sa == "" || strings.Contains(sa, ":") {
		return "", "", false
	}
	return ns, sa, true
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

// impersonationChecks records the impersonation filter's authorization
// checks (upstream's metricsAuthorizer): by the mode of the checked verb,
// "allowed" or "denied" (any other answer).
type impersonationChecks struct {
	authorizer.Authorizer
	m *metrics.AuthMetrics
}

func (c impersonationChecks) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	start := time.Now()
	d, reason, err := c.Authorizer.Authorize(ctx, a)
	c.m.ImpersonationAuthorization(a.Verb, d == authorizer.DecisionAllow, time.Since(start))
	return d, reason, err
}
