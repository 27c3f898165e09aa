package impersonation

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// Well-known names.
const (
	// NodeNameKey is the extra a service account token bound to a pod
	// carries: the pod's node.
	NodeNameKey = "authentication.kubernetes.io/node-name"
	// associatedNodeKeys replaces the requestor's extra in the
	// associated-node checks (upstream's name): the keys only, so one
	// rule serves a daemon set's pods on every node.
	associatedNodeKeys = "authentication.kubernetes.io/associated-node-keys"
	nodesGroup         = "system:nodes"
	authnGroup         = "authentication.k8s.io"
)

// Wanted is the user the headers ask for.
type Wanted struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

func (w Wanted) onlyName() bool { return w.UID == "" && len(w.Groups) == 0 && len(w.Extra) == 0 }

// Denied is a refusal: the attributes that were not authorized and the
// reason, for the caller's Forbidden status.
type Denied struct {
	Attributes authorizer.Attributes
	Reason     string
}

func (d *Denied) Error() string { return d.Reason }

// Check decides, without any memory of earlier requests, whether
// requestor may make the request described by request (its own
// authorization attributes; request.User is replaced by requestor) as
// wanted: a Tracker with no caches. See Tracker.Check.
func Check(ctx context.Context, authz authorizer.Authorizer, requestor *user.Info, wanted Wanted, request authorizer.Attributes) (*user.Info, string, *Denied) {
	var t Tracker
	return t.Check(ctx, authz, requestor, wanted, request)
}

// The modes, in upstream's order (allImpersonationModes).
const (
	modeAssociatedNode = iota
	modeArbitraryNode
	modeServiceAccount
	modeUserInfo
	modeLegacy
	numModes
)

// modeNames are the constrained modes' names in their verbs
// (impersonate:<name>, impersonate-on:<name>:<verb>).
var modeNames = [modeLegacy]string{"associated-node", "arbitrary-node", "serviceaccount", "user-info"}

// Tracker decides impersonations as upstream's impersonation filter
// (impersonationModesTracker), remembering what upstream remembers, since
// both are visible to clients and authorizers:
//
//   - per requestor user name, the mode that last allowed it (an LRU of
//     10,000 names), tried first the next time: a caller who impersonated
//     with the legacy verb is next refused with the legacy check's message,
//     not the user-info mode's impersonate-on one;
//   - per constrained mode, for 10 seconds, the impersonations it allowed:
//     for the whole request (the wanted user, the requestor and the
//     request's attributes) and for the user alone (the wanted user and the
//     requestor: the impersonate:<mode> checks), so that a repeat asks the
//     authorizer nothing and a later request as the same user asks only
//     impersonate-on:<mode>:<verb>. A revoked grant can thus keep working
//     for up to 10 seconds, as upstream. Refusals and legacy
//     impersonations are never cached.
//
// The zero Tracker remembers nothing. Use NewTracker. It is safe for
// concurrent use.
type Tracker struct {
	lastMode *modeIndex
	// outer and inner are the constrained modes' caches, nil in the zero
	// Tracker.
	outer, inner [modeLegacy]*expiring
	// now is the clock of the caches (time.Now unless a test sets it).
	now func() time.Time
}

// NewTracker returns a Tracker with upstream's caches.
func NewTracker() *Tracker {
	t := &Tracker{lastMode: newModeIndex(modeIndexSize), now: time.Now}
	for i := range t.outer {
		t.outer[i] = &expiring{}
		t.inner[i] = &expiring{}
	}
	return t
}

// Check decides whether requestor may make the request described by
// request (its own authorization attributes; request.User is replaced by
// requestor) as wanted. It returns the user to serve the request as and
// the verb that allowed it ("" for legacy impersonation), or the first
// denial: of the mode that last allowed requestor, tried first, else of
// the modes in order.
func (t *Tracker) Check(ctx context.Context, authz authorizer.Authorizer, requestor *user.Info, wanted Wanted, request authorizer.Attributes) (*user.Info, string, *Denied) {
	request.User = requestor
	var first *Denied
	last, hasLast := t.lastMode.get(requestor.Name)
	if hasLast {
		u, verb, d := t.mode(ctx, last, authz, requestor, wanted, request)
		if u != nil {
			return u, verb, nil
		}
		first = d
	}
	for i := range numModes {
		if hasLast && i == last {
			continue
		}
		u, verb, d := t.mode(ctx, i, authz, requestor, wanted, request)
		if u != nil {
			t.lastMode.set(requestor.Name, i)
			return u, verb, nil
		}
		if d != nil && first == nil {
			first = d
		}
	}
	if first == nil {
		// Unreachable: legacy always decides. Fail closed.
		first = &Denied{Attributes: request, Reason: "all impersonation modes failed"}
	}
	return nil, "", first
}

// mode runs mode i: (nil, "", nil) when it does not apply.
func (t *Tracker) mode(ctx context.Context, i int, authz authorizer.Authorizer, requestor *user.Info, wanted Wanted, request authorizer.Attributes) (*user.Info, string, *Denied) {
	switch i {
	case modeLegacy:
		return checkUser(ctx, authz, requestor, wanted, "impersonate", false)
	case modeAssociatedNode:
		return t.associatedNode(ctx, authz, requestor, wanted, request)
	case modeArbitraryNode:
		if _, ok := nodeName(wanted.Name); !ok || !wanted.onlyName() {
			return nil, "", nil
		}
	case modeServiceAccount:
		if _, _, ok := serviceAccount(wanted.Name); !ok || !wanted.onlyName() {
			return nil, "", nil
		}
	case modeUserInfo:
		_, isNode := nodeName(wanted.Name)
		_, _, isSA := serviceAccount(wanted.Name)
		if isNode || isSA {
			return nil, "", nil
		}
	}
	return t.constrained(ctx, i, authz, wanted, wanted, requestor, request)
}

// constrained is constrained mode i once it applies: the requestor needs
// impersonate-on:<mode>:<verb> on the request, then impersonate:<mode> on
// each part of the wanted user. keyWanted and keyRequestor name the
// caches' entries (the wanted user and the requestor but for
// associated-node).
func (t *Tracker) constrained(ctx context.Context, i int, authz authorizer.Authorizer, wanted, keyWanted Wanted, keyRequestor *user.Info, request authorizer.Attributes) (*user.Info, string, *Denied) {
	verb := "impersonate:" + modeNames[i]
	outer, inner := t.outer[i], t.inner[i]
	var outerKey, innerKey string
	if outer != nil {
		outerKey = cacheKey(keyWanted, keyRequestor, &request)
		if u := outer.get(outerKey, t.now()); u != nil {
			return u, verb, nil
		}
	}
	on := request
	on.Verb = "impersonate-on:" + modeNames[i] + ":" + request.Verb
	if d := check(ctx, authz, on); d != nil {
		return nil, "", d
	}
	if inner != nil {
		innerKey = cacheKey(keyWanted, keyRequestor, nil)
		if u := inner.get(innerKey, t.now()); u != nil {
			// u is already a copy; the outer cache keeps it, so the
			// caller gets one of its own.
			outer.set(outerKey, u, t.now())
			return copyUser(u), verb, nil
		}
	}
	u, verb, d := checkUser(ctx, authz, request.User, wanted, verb, true)
	if d != nil {
		return nil, "", d
	}
	if inner != nil {
		now := t.now()
		inner.set(innerKey, u, now)
		outer.set(outerKey, u, now)
		u = copyUser(u) // callers get their own copy of what the caches keep
	}
	return u, verb, nil
}

// associatedNode is the associated-node mode. It applies to a service
// account whose token is bound to a pod on node N asking for
// system:node:N alone. Its checks (and its caches' keys) see the
// requestor's extra keys only and, for impersonate:associated-node, the
// node name "*" (upstream's, so that one answer holds for every node a
// daemon set runs on).
func (t *Tracker) associatedNode(ctx context.Context, authz authorizer.Authorizer, requestor *user.Info, wanted Wanted, request authorizer.Attributes) (*user.Info, string, *Denied) {
	node, ok := nodeName(wanted.Name)
	if !wanted.onlyName() || !ok {
		return nil, "", nil
	}
	if _, _, isSA := serviceAccount(requestor.Name); !isSA {
		return nil, "", nil
	}
	if v := requestor.Extra[NodeNameKey]; len(v) != 1 || v[0] != node {
		return nil, "", nil
	}
	keys := make([]string, 0, len(requestor.Extra))
	for k := range requestor.Extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	masked := *requestor
	masked.Extra = map[string][]string{associatedNodeKeys: keys}
	wrapped := authorizerFunc(func(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		a.User = &masked
		if a.Verb == "impersonate:associated-node" {
			a.Name = "*"
		}
		if d := check(ctx, authz, a); d != nil {
			return authorizer.DecisionDeny, d.Reason, &forbidden{d}
		}
		return authorizer.DecisionAllow, "", nil
	})
	u, verb, d := t.constrained(ctx, modeAssociatedNode, wrapped, wanted, Wanted{Name: "system:node:*"}, &masked, request)
	if u == nil {
		return nil, "", d
	}
	// A cached answer may be another node's: the name is the one asked for.
	cp := *u
	cp.Name = wanted.Name
	return &cp, verb, nil
}

// forbidden carries a denial through an authorizer error unchanged.
type forbidden struct{ d *Denied }

func (f *forbidden) Error() string { return f.d.Reason }

type authorizerFunc func(context.Context, authorizer.Attributes) (authorizer.Decision, string, error)

func (f authorizerFunc) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	return f(ctx, a)
}

// checkUser authorizes each part of wanted with verb (upstream's
// impersonationModeState.check): the user name, the uid, the groups and
// the extra, and returns the user to serve the request as.
func checkUser(ctx context.Context, authz authorizer.Authorizer, requestor *user.Info, wanted Wanted, verb string, constrainedMode bool) (*user.Info, string, *Denied) {
	group, version := "", "v1"
	if constrainedMode {
		group = authnGroup
	}
	attrs := func(g, resource, name string) authorizer.Attributes {
		return authorizer.Attributes{User: requestor, Verb: verb, ResourceRequest: true, APIGroup: g, APIVersion: version, Resource: resource, Name: name}
	}
	actual := &user.Info{Name: wanted.Name, UID: wanted.UID, Groups: slices.Clone(wanted.Groups), Extra: wanted.Extra}

	// The user name.
	a := attrs(group, "users", wanted.Name)
	if constrainedMode {
		if n, ok := nodeName(wanted.Name); ok {
			a.Resource, a.Name = "nodes", n
			if len(wanted.Groups) > 0 {
				return nil, "", &Denied{a, fmt.Sprintf("when impersonating a node, cannot impersonate groups %q", wanted.Groups)}
			}
			actual.Groups = []string{nodesGroup}
		}
	}
	if ns, sa, ok := serviceAccount(wanted.Name); ok {
		a.Resource, a.Namespace, a.Name = "serviceaccounts", ns, sa
		if constrainedMode && len(wanted.Groups) > 0 {
			return nil, "", &Denied{a, fmt.Sprintf("when impersonating a service account, cannot impersonate groups %q", wanted.Groups)}
		}
		if len(wanted.Groups) == 0 {
			actual.Groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns}
		}
	}
	if d := check(ctx, authz, a); d != nil {
		return nil, "", d
	}
	// The uid.
	if wanted.UID != "" {
		if d := check(ctx, authz, attrs(authnGroup, "uids", wanted.UID)); d != nil {
			return nil, "", d
		}
	}
	// The groups.
	if len(wanted.Groups) > 0 {
		g := attrs(group, "groups", "")
		if constrainedMode {
			if slices.Contains(wanted.Groups, "") {
				return nil, "", &Denied{g, "impersonating the empty string group is not allowed"}
			}
			if slices.Contains(wanted.Groups, user.SystemPrivileged) {
				g.Name = user.SystemPrivileged
				return nil, "", &Denied{g, "impersonating the system:masters group is not allowed"}
			}
		}
		allowedAll := false
		if constrainedMode && len(wanted.Groups) >= manyChecks {
			g.Name = "*"
			allowedAll = check(ctx, authz, g) == nil
		}
		for _, name := range wanted.Groups {
			if allowedAll {
				break
			}
			g.Name = name
			if d := check(ctx, authz, g); d != nil {
				return nil, "", d
			}
		}
	}
	// The extra, keys in order.
	if len(wanted.Extra) > 0 {
		e := attrs(authnGroup, "userextras", "")
		if constrainedMode {
			if err := validateExtra(wanted.Extra); err != nil {
				return nil, "", &Denied{e, err.Error()}
			}
		}
		allowedAll := false
		if constrainedMode && largeExtra(wanted.Extra) {
			e.Subresource, e.Name = "*", "*"
			allowedAll = check(ctx, authz, e) == nil
		}
		keys := make([]string, 0, len(wanted.Extra))
		for k := range wanted.Extra {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if allowedAll {
				break
			}
			for _, v := range wanted.Extra[k] {
				e.Subresource, e.Name = k, v
				if d := check(ctx, authz, e); d != nil {
					return nil, "", d
				}
			}
		}
	}
	if actual.Name == user.Anonymous {
		ensureGroup(actual, user.AllUnauthenticated)
	} else if !slices.Contains(actual.Groups, user.AllUnauthenticated) {
		ensureGroup(actual, user.AllAuthenticated)
	}
	if !constrainedMode {
		verb = ""
	}
	return actual, verb, nil
}

// manyChecks is upstream's threshold (manyAuthorizationChecksInLoop) past
// which a constrained mode first tries one wildcard check.
const manyChecks = 4

func largeExtra(extra map[string][]string) bool {
	n := 0
	for _, v := range extra {
		n += len(v)
	}
	return len(extra) >= manyChecks || n >= manyChecks
}

func validateExtra(extra map[string][]string) error {
	fp := field.NewPath("extra", "key")
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		values := extra[k]
		if k == "" {
			return fmt.Errorf("impersonating the empty string key in extra is not allowed")
		}
		if err := utilvalidation.IsDomainPrefixedPath(fp, k).ToAggregate(); err != nil {
			return fmt.Errorf("impersonating an invalid key in extra is not allowed: %w", err)
		}
		if k != strings.ToLower(k) {
			return fmt.Errorf("impersonating a non-lowercase key in extra is not allowed: %q", k)
		}
		if len(values) == 0 {
			return fmt.Errorf("impersonating empty values in extra is not allowed")
		}
		if slices.Contains(values, "") {
			return fmt.Errorf("impersonating the empty string value in extra is not allowed")
		}
	}
	return nil
}

// check asks authz; anything but Allow is a denial with the reason (and
// the error, as upstream's checkAuthorization words it).
func check(ctx context.Context, authz authorizer.Authorizer, a authorizer.Attributes) *Denied {
	d, reason, err := authz.Authorize(ctx, a)
	if d == authorizer.DecisionAllow {
		return nil
	}
	if f, ok := err.(*forbidden); ok {
		return f.d
	}
	msg := reason
	switch {
	case err != nil && reason != "":
		msg = fmt.Sprintf("%v: %s", err, reason)
	case err != nil:
		msg = err.Error()
	}
	return &Denied{Attributes: a, Reason: msg}
}

func ensureGroup(u *user.Info, g string) {
	if !slices.Contains(u.Groups, g) {
		u.Groups = append(u.Groups, g)
	}
}

// nodeName returns N of system:node:N when N is a valid node name.
func nodeName(name string) (string, bool) {
	n, ok := strings.CutPrefix(name, "system:node:")
	if !ok || len(validation.NameIsDNSSubdomain(n, false)) != 0 {
		return "", false
	}
	return n, true
}

// serviceAccount splits system:serviceaccount:<ns>:<name> (upstream's
// serviceaccount.SplitUsername: both parts valid names).
func serviceAccount(name string) (ns, sa string, ok bool) {
	rest, found := strings.CutPrefix(name, "system:serviceaccount:")
	if !found {
		return "", "", false
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 2 || len(validation.ValidateNamespaceName(parts[0], false)) != 0 ||
		len(validation.ValidateServiceAccountName(parts[1], false)) != 0 {
		return "", "", false
	}
	return parts[0], parts[1], true
}
