package filters

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// impersonationAuthz allows the impersonate checks listed in allowed
// ("resource/name" or "resource/subresource/name", "ns:" prefixed for
// namespaced) and records every check.
type impersonationAuthz struct {
	mu      sync.Mutex
	allowed []string
	seen    []string
}

func (a *impersonationAuthz) Authorize(_ context.Context, at authorizer.Attributes) (authorizer.Decision, string, error) {
	key := at.Resource
	if at.Subresource != "" {
		key += "/" + at.Subresource
	}
	key += "/" + at.Name
	if at.Namespace != "" {
		key = at.Namespace + ":" + key
	}
	key = at.APIGroup + "|" + at.Verb + "|" + key
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seen = append(a.seen, key)
	if slices.Contains(a.allowed, key) {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func TestImpersonation(t *testing.T) {
	alice := &user.Info{Name: "alice", Groups: []string{user.AllAuthenticated}}
	tests := []struct {
		name      string
		headers   http.Header
		allowed   []string
		code      int
		as        string // user as served: name|uid|groups|extra
		message   string
		wantSeen  []string
		checkSeen bool
	}{
		{name: "no headers", code: 200, as: "alice||system:authenticated|"},
		{name: "user", headers: http.Header{"Impersonate-User": {"bob"}}, allowed: []string{"|impersonate|users/bob"},
			code: 200, as: "bob||system:authenticated|"},
		// With constrained impersonation (on by default since v1.36) the
		// first denial is the user-info mode's impersonate-on check on the
		// request (upstream's impersonation tracker returns the first
		// error of its modes, user-info coming before legacy).
		{name: "user refused", headers: http.Header{"Impersonate-User": {"bob"}}, code: 403,
			message: `pods is forbidden: User "alice" cannot impersonate-on:user-info:list resource "pods" in API group "" at the cluster scope`},
		{name: "user-info mode", headers: http.Header{"Impersonate-User": {"bob"}, "Impersonate-Group": {"devs"}},
			allowed: []string{"|impersonate-on:user-info:list|pods/", "authentication.k8s.io|impersonate:user-info|users/bob", "authentication.k8s.io|impersonate:user-info|groups/devs"},
			code:    200, as: "bob||devs,system:authenticated|"},
		{name: "user-info mode may not add system:masters", headers: http.Header{"Impersonate-User": {"bob"}, "Impersonate-Group": {"system:masters"}},
			allowed: []string{"|impersonate-on:user-info:list|pods/", "authentication.k8s.io|impersonate:user-info|users/bob", "authentication.k8s.io|impersonate:user-info|groups/system:masters"},
			code:    403, message: `groups.authentication.k8s.io "system:masters" is forbidden: User "alice" cannot impersonate:user-info resource "groups" in API group "authentication.k8s.io" at the cluster scope: impersonating the system:masters group is not allowed`},
		{name: "serviceaccount mode", headers: http.Header{"Impersonate-User": {"system:serviceaccount:ns:robot"}},
			allowed: []string{"|impersonate-on:serviceaccount:list|pods/", "authentication.k8s.io|impersonate:serviceaccount|ns:serviceaccounts/robot"},
			code:    200, as: "system:serviceaccount:ns:robot||system:serviceaccounts,system:serviceaccounts:ns,system:authenticated|"},
		{name: "serviceaccount mode without the action", headers: http.Header{"Impersonate-User": {"system:serviceaccount:ns:robot"}},
			allowed: []string{"authentication.k8s.io|impersonate:serviceaccount|ns:serviceaccounts/robot"}, code: 403,
			message: `pods is forbidden: User "alice" cannot impersonate-on:serviceaccount:list resource "pods" in API group "" at the cluster scope`},
		{name: "arbitrary-node mode", headers: http.Header{"Impersonate-User": {"system:node:n1"}},
			allowed: []string{"|impersonate-on:arbitrary-node:list|pods/", "authentication.k8s.io|impersonate:arbitrary-node|nodes/n1"},
			code:    200, as: "system:node:n1||system:nodes,system:authenticated|"},
		{name: "node with groups is not a node mode", headers: http.Header{"Impersonate-User": {"system:node:n1"}, "Impersonate-Group": {"system:nodes"}},
			allowed: []string{"|impersonate-on:arbitrary-node:list|pods/", "authentication.k8s.io|impersonate:arbitrary-node|nodes/n1"}, code: 403,
			message: `users "system:node:n1" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope`},
		{name: "groups, extra and uid, in upstream's order",
			headers: http.Header{"Impersonate-User": {"bob"}, "Impersonate-Group": {"devs", "ops"}, "Impersonate-Extra-Scopes": {"a", "b"},
				"Impersonate-Extra-Example.com%2fteam": {"x"}, "Impersonate-Uid": {"u-1"}},
			allowed: []string{"|impersonate|users/bob", "|impersonate|groups/devs", "|impersonate|groups/ops",
				"authentication.k8s.io|impersonate|userextras/example.com/team/x", "authentication.k8s.io|impersonate|userextras/scopes/a",
				"authentication.k8s.io|impersonate|userextras/scopes/b", "authentication.k8s.io|impersonate|uids/u-1"},
			code: 200, as: "bob|u-1|devs,ops,system:authenticated|example.com/team=x;scopes=a,b", checkSeen: true,
			// Upstream v1.37's legacy order: user, uid, groups, extra (after
			// the user-info mode's refused impersonate-on check).
			wantSeen: []string{"|impersonate-on:user-info:list|pods/", "|impersonate|users/bob", "authentication.k8s.io|impersonate|uids/u-1",
				"|impersonate|groups/devs", "|impersonate|groups/ops",
				"authentication.k8s.io|impersonate|userextras/example.com/team/x", "authentication.k8s.io|impersonate|userextras/scopes/a",
				"authentication.k8s.io|impersonate|userextras/scopes/b"}},
		{name: "a refused group stops the request", headers: http.Header{"Impersonate-User": {"bob"}, "Impersonate-Group": {"system:masters"}},
			allowed: []string{"|impersonate|users/bob"}, code: 403,
			message: `pods is forbidden: User "alice" cannot impersonate-on:user-info:list resource "pods" in API group "" at the cluster scope`},
		{name: "service account", headers: http.Header{"Impersonate-User": {"system:serviceaccount:ns:robot"}},
			allowed: []string{"|impersonate|ns:serviceaccounts/robot"}, code: 200,
			as: "system:serviceaccount:ns:robot||system:serviceaccounts,system:serviceaccounts:ns,system:authenticated|"},
		{name: "service account refused", headers: http.Header{"Impersonate-User": {"system:serviceaccount:ns:robot"}}, code: 403,
			message: `pods is forbidden: User "alice" cannot impersonate-on:serviceaccount:list resource "pods" in API group "" at the cluster scope`},
		{name: "anonymous", headers: http.Header{"Impersonate-User": {"system:anonymous"}}, allowed: []string{"|impersonate|users/system:anonymous"},
			code: 200, as: "system:anonymous||system:unauthenticated|"},
		// Messages as kube-apiserver v1.37.2 answered them (Go's %#v of
		// its user.DefaultInfo).
		{name: "group without user", headers: http.Header{"Impersonate-Group": {"devs"}}, code: 400,
			message: `requested &user.DefaultInfo{Name:"", UID:"", Groups:[]string{"devs"}, Extra:map[string][]string(nil)} without impersonating a user name`},
		{name: "uid without user", headers: http.Header{"Impersonate-Uid": {"x"}}, code: 400,
			message: `requested &user.DefaultInfo{Name:"", UID:"x", Groups:[]string(nil), Extra:map[string][]string(nil)} without impersonating a user name`},
		{name: "uid and extra without user", headers: http.Header{"Impersonate-Uid": {"u"}, "Impersonate-Extra-Foo": {"v"}}, code: 400,
			message: `requested &user.DefaultInfo{Name:"", UID:"u", Groups:[]string(nil), Extra:map[string][]string{"foo":[]string{"v"}}} without impersonating a user name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			authz := &impersonationAuthz{allowed: tt.allowed}
			var served string
			h := WithImpersonation(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				u, _ := request.UserFrom(r.Context())
				var extra []string
				for k, v := range u.Extra {
					extra = append(extra, k+"="+strings.Join(v, ","))
				}
				slices.Sort(extra)
				served = fmt.Sprintf("%s|%s|%s|%s", u.Name, u.UID, strings.Join(u.Groups, ","), strings.Join(extra, ";"))
				if len(impersonationHeaders(r.Header)) != 0 {
					t.Errorf("impersonation headers reached the handler: %v", r.Header)
				}
			}), authz, discard(), nil)
			r := httptest.NewRequest(http.MethodGet, "/api/v1/pods", nil)
			r.Header = tt.headers.Clone()
			if r.Header == nil {
				r.Header = http.Header{}
			}
			r = r.WithContext(request.WithRequestInfo(request.WithUser(r.Context(), alice), &request.RequestInfo{
				IsResourceRequest: true, Verb: "list", APIPrefix: "api", APIVersion: "v1", Resource: "pods", Path: "/api/v1/pods"}))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.code {
				t.Fatalf("got %d %s, want %d", w.Code, w.Body, tt.code)
			}
			if tt.code == 200 && served != tt.as {
				t.Errorf("served as %q, want %q", served, tt.as)
			}
			if tt.message != "" {
				var st metav1.Status
				if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || st.Message != tt.message {
					t.Errorf("got %q (%v), want %q", st.Message, err, tt.message)
				}
			}
			if tt.checkSeen && !slices.Equal(authz.seen, tt.wantSeen) {
				t.Errorf("checks %q, want %q", authz.seen, tt.wantSeen)
			}
		})
	}
}

// eventRecorder is an audit backend keeping the events it is given.
type eventRecorder struct {
	mu  sync.Mutex
	evs []*audit.Event
}

func (b *eventRecorder) ProcessEvents(evs ...*audit.Event) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.evs = append(b.evs, evs...)
	return true
}
func (b *eventRecorder) Run(<-chan struct{}) error { return nil }
func (b *eventRecorder) Shutdown()                 {}

// The audit event of an impersonated request, as kube-apiserver v1.37.2
// wrote it (audit log, level Metadata): the constrained mode's verb as
// authenticationMetadata.impersonationConstraint (absent for legacy
// impersonation), and a refused impersonation with its 403 status but
// no authorization annotations.
func TestImpersonationAudit(t *testing.T) {
	alice := &user.Info{Name: "alice", Groups: []string{user.AllAuthenticated}}
	allowed := []string{"|impersonate-on:user-info:list|pods/", "authentication.k8s.io|impersonate:user-info|users/bob",
		"authentication.k8s.io|impersonate:user-info|groups/g1", "|impersonate|users/dave"}
	h := WithImpersonation(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), &impersonationAuthz{allowed: allowed}, discard(), nil)
	for _, tc := range []struct {
		name       string
		headers    http.Header
		code       int
		as         string // impersonatedUser: name|groups
		constraint string
	}{
		{"user-info", http.Header{"Impersonate-User": {"bob"}, "Impersonate-Group": {"g1"}}, 200, "bob|g1,system:authenticated", "impersonate:user-info"},
		{"legacy", http.Header{"Impersonate-User": {"dave"}}, 200, "dave|system:authenticated", ""},
		{"refused", http.Header{"Impersonate-User": {"frank"}}, 403, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &eventRecorder{}
			ctx := audit.WithContext(context.Background())
			audit.FromContext(ctx).Begin(&audit.Event{}, audit.Policy{Level: audit.LevelMetadata}, b, nil)
			req := httptest.NewRequest("GET", "/api/v1/pods", nil).WithContext(ctx)
			req.Header = tc.headers
			req = req.WithContext(request.WithRequestInfo(request.WithUser(req.Context(), alice), &request.RequestInfo{
				IsResourceRequest: true, Verb: "list", APIPrefix: "api", APIVersion: "v1", Resource: "pods", Path: "/api/v1/pods"}))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.code {
				t.Fatalf("got %d %s, want %d", rec.Code, rec.Body, tc.code)
			}
			audit.FromContext(ctx).Emit(audit.StageResponseComplete)
			if len(b.evs) != 1 {
				t.Fatalf("%d events", len(b.evs))
			}
			ev := b.evs[0]
			as := ""
			if ev.ImpersonatedUser != nil {
				as = ev.ImpersonatedUser.Username + "|" + strings.Join(ev.ImpersonatedUser.Groups, ",")
			}
			constraint := ""
			if ev.AuthenticationMetadata != nil {
				constraint = ev.AuthenticationMetadata.ImpersonationConstraint
				if constraint == "" {
					t.Error("authenticationMetadata without a constraint")
				}
			}
			if as != tc.as || constraint != tc.constraint {
				t.Errorf("impersonatedUser %q constraint %q, want %q %q", as, constraint, tc.as, tc.constraint)
			}
			if len(ev.Annotations) != 0 {
				t.Errorf("annotations %v, want none", ev.Annotations)
			}
			if tc.code == 403 && (ev.ResponseStatus == nil || ev.ResponseStatus.Code != 403) {
				t.Errorf("response status %+v", ev.ResponseStatus)
			}
		})
	}
}
