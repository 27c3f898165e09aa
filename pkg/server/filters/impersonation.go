package filters

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strings"

	authnv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/impersonation"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/endpoints/responsewriters"
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
// Group, Uid or Extra headers without Impersonate-User are a 400 (upstream
// answers 500 for this bad input; kapi keeps 5xx for its own faults).
//
// It sits where upstream's does: inside authentication and audit, outside
// max-in-flight and authorization. A nil authz disables impersonation
// checks (the headers are then honoured for anyone: only with
// authorization disabled).
func WithImpersonation(handler http.Handler, authz authorizer.Authorizer, logger *slog.Logger) http.Handler {
	logger = orDefault(logger)
	tracker := impersonation.NewTracker()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(impersonationHeaders(r.Header)) == 0 {
			handler.ServeHTTP(w, r)
			return
		}
		ctx := r.Context()
		caller, _ := request.UserFrom(ctx)
		reqs, err := impersonationRequests(r.Header)
		if err != nil {
			st := apierrors.NewBadRequest(err.Error()).ErrStatus
			responsewriters.WriteStatusAudited(w, r, &st)
			return
		}
		var wanted impersonation.Wanted
		for _, ir := range reqs {
			switch ir.kind {
			case "user":
				wanted.Name = ir.value
			case "group":
				wanted.Groups = append(wanted.Groups, ir.value)
			case "extra":
				if wanted.Extra == nil {
					wanted.Extra = map[string][]string{}
				}
				wanted.Extra[ir.key] = append(wanted.Extra[ir.key], ir.value)
			case "uid":
				wanted.UID = ir.value
			}
		}
		var as *user.Info
		var constraint string // the constrained mode's verb that allowed it
		if authz == nil {
			as = legacyUnchecked(wanted)
		} else {
			// The request's own attributes, for the constrained modes'
			// impersonate-on:<mode>:<verb> checks.
			reqAttrs, _ := AttributesFrom(r)
			var denied *impersonation.Denied
			as, constraint, denied = tracker.Check(ctx, authz, caller, wanted, reqAttrs)
			if denied != nil {
				logger.Debug("impersonation forbidden", "URI", r.RequestURI, "reason", denied.Reason)
				// No authorization annotations: upstream's impersonation
				// filter answers through responsewriters.Forbidden alone.
				responsewriters.WriteStatusAudited(w, r, Forbidden(denied.Attributes, denied.Reason))
				return
			}
		}
		audit.LogImpersonatedUser(ctx, authnv1.UserInfo{Username: as.Name, UID: as.UID, Groups: as.Groups, Extra: toExtra(as.Extra)}, constraint)
		r = r.Clone(request.WithUser(ctx, as))
		for _, h := range impersonationHeaders(r.Header) {
			r.Header.Del(h)
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

// impersonationRequest is one part of an impersonation to authorize.
type impersonationRequest struct {
	kind  string // user, group, extra, uid
	key   string // extra key
	value string
}

// impersonationRequests parses the headers in upstream's order: the user,
// the groups, the extras (keys sorted), the uid.
func impersonationRequests(h http.Header) ([]impersonationRequest, error) {
	var out []impersonationRequest
	name := h.Get(authnv1.ImpersonateUserHeader)
	if name != "" {
		out = append(out, impersonationRequest{kind: "user", value: name})
	}
	other := false
	for _, g := range h.Values(authnv1.ImpersonateGroupHeader) {
		out = append(out, impersonationRequest{kind: "group", value: g})
		other = true
	}
	var keys []string
	for k := range h {
		ck := textproto.CanonicalMIMEHeaderKey(k)
		if strings.HasPrefix(ck, authnv1.ImpersonateUserExtraHeaderPrefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		raw := strings.ToLower(k[len(authnv1.ImpersonateUserExtraHeaderPrefix):])
		key, err := url.PathUnescape(raw)
		if err != nil {
			key = raw
		}
		for _, v := range h[k] {
			out = append(out, impersonationRequest{kind: "extra", key: key, value: v})
			other = true
		}
	}
	if uids := h.Values(authnv1.ImpersonateUIDHeader); len(uids) > 0 {
		out = append(out, impersonationRequest{kind: "uid", value: uids[0]})
		other = true
	}
	if name == "" && other {
		return nil, errNoImpersonatedUser(out)
	}
	return out, nil
}

// errNoImpersonatedUser is upstream's refusal of groups, uid or extra
// without a user: the wanted user printed as Go syntax (%#v of its
// *user.DefaultInfo), e.g. `requested &user.DefaultInfo{Name:"", UID:"",
// Groups:[]string{"devs"}, Extra:map[string][]string(nil)} without
// impersonating a user name`.
func errNoImpersonatedUser(reqs []impersonationRequest) error {
	var uid string
	var groups []string
	var extra map[string][]string
	for _, r := range reqs {
		switch r.kind {
		case "uid":
			uid = r.value
		case "group":
			groups = append(groups, r.value)
		case "extra":
			if extra == nil {
				extra = map[string][]string{}
			}
			extra[r.key] = append(extra[r.key], r.value)
		}
	}
	return fmt.Errorf("requested &user.DefaultInfo{Name:\"\", UID:%#v, Groups:%#v, Extra:%#v} without impersonating a user name", uid, groups, extra)
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
