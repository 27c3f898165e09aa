package impersonation

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// recorder allows the checks listed ("group|verb|ns:resource/sub/name
// extra-keys") and records every check as that key.
type recorder struct {
	allowed, seen []string
}

func key(a authorizer.Attributes) string {
	k := a.APIGroup + "|" + a.Verb + "|"
	if a.Namespace != "" {
		k += a.Namespace + ":"
	}
	k += a.Resource
	if a.Subresource != "" {
		k += "/" + a.Subresource
	}
	k += "/" + a.Name
	if v, ok := a.User.Extra[associatedNodeKeys]; ok {
		k += " " + strings.Join(v, ",")
	}
	return k
}

func (r *recorder) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	k := key(a)
	r.seen = append(r.seen, k)
	if slices.Contains(r.allowed, k) {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// Checks and results as upstream's constrained impersonation
// (k8s.io/apiserver/pkg/endpoints/filters/impersonation, v1.36+).
func TestAssociatedNode(t *testing.T) {
	agent := &user.Info{Name: "system:serviceaccount:kube-system:agent", Groups: []string{"system:serviceaccounts"},
		Extra: map[string][]string{NodeNameKey: {"n1"}, "authentication.kubernetes.io/pod-name": {"agent-x"}}}
	get := authorizer.Attributes{Verb: "get", ResourceRequest: true, APIVersion: "v1", Resource: "pods", Namespace: "ns", Name: "p"}
	const keys = " authentication.kubernetes.io/node-name,authentication.kubernetes.io/pod-name"
	r := &recorder{allowed: []string{
		"|impersonate-on:associated-node:get|ns:pods/p" + keys,
		"authentication.k8s.io|impersonate:associated-node|nodes/*" + keys,
	}}
	u, verb, d := Check(context.Background(), r, agent, Wanted{Name: "system:node:n1"}, get)
	if d != nil {
		t.Fatalf("denied: %+v (checks %q)", d, r.seen)
	}
	if verb != "impersonate:associated-node" || u.Name != "system:node:n1" || strings.Join(u.Groups, ",") != "system:nodes,system:authenticated" || u.Extra != nil {
		t.Errorf("got %+v via %q", u, verb)
	}
	if want := r.allowed; !slices.Equal(r.seen, want) {
		t.Errorf("checks %q, want %q", r.seen, want)
	}

	// Another node: associated-node does not apply; arbitrary-node is
	// refused on the action; its denial is the first and is returned.
	r.seen = nil
	_, _, d = Check(context.Background(), r, agent, Wanted{Name: "system:node:n2"}, get)
	if d == nil || d.Attributes.Verb != "impersonate-on:arbitrary-node:get" || d.Attributes.User.Name != agent.Name {
		t.Fatalf("n2: %+v", d)
	}
	if want := []string{"|impersonate-on:arbitrary-node:get|ns:pods/p", "|impersonate|users/system:node:n2"}; !slices.Equal(r.seen, want) {
		t.Errorf("checks %q, want %q", r.seen, want)
	}
	// A user that is not a service account never uses associated-node.
	r.seen = nil
	human := &user.Info{Name: "alice", Extra: map[string][]string{NodeNameKey: {"n1"}}}
	if _, _, d = Check(context.Background(), r, human, Wanted{Name: "system:node:n1"}, get); d == nil {
		t.Fatal("a human with a node-name extra impersonated the node")
	}
	if slices.ContainsFunc(r.seen, func(s string) bool { return strings.Contains(s, "associated-node") }) {
		t.Errorf("associated-node checked for a human: %q", r.seen)
	}
}

func TestModes(t *testing.T) {
	alice := &user.Info{Name: "alice"}
	list := authorizer.Attributes{Verb: "list", ResourceRequest: true, APIVersion: "v1", Resource: "pods"}
	for _, tc := range []struct {
		name    string
		wanted  Wanted
		allowed []string
		verb    string // the mode that allows; "" legacy
		groups  string
		denied  string // Denied reason or attributes verb when refused
	}{
		{"legacy", Wanted{Name: "bob"}, []string{"|impersonate|users/bob"}, "", "system:authenticated", ""},
		{"user-info", Wanted{Name: "bob", UID: "u", Groups: []string{"g"}, Extra: map[string][]string{"example.com/k": {"v"}}},
			[]string{"|impersonate-on:user-info:list|pods/", "authentication.k8s.io|impersonate:user-info|users/bob",
				"authentication.k8s.io|impersonate:user-info|uids/u", "authentication.k8s.io|impersonate:user-info|groups/g",
				"authentication.k8s.io|impersonate:user-info|userextras/example.com/k/v"},
			"impersonate:user-info", "g,system:authenticated", ""},
		{"many groups: one wildcard check", Wanted{Name: "bob", Groups: []string{"a", "b", "c", "d"}},
			[]string{"|impersonate-on:user-info:list|pods/", "authentication.k8s.io|impersonate:user-info|users/bob", "authentication.k8s.io|impersonate:user-info|groups/*"},
			"impersonate:user-info", "a,b,c,d,system:authenticated", ""},
		{"upper-case extra key refused in user-info, legacy decides", Wanted{Name: "bob", Extra: map[string][]string{"example.com/K": {"v"}}},
			[]string{"|impersonate-on:user-info:list|pods/", "authentication.k8s.io|impersonate:user-info|users/bob"},
			"", "", "impersonating a non-lowercase key in extra is not allowed: \"example.com/K\""},
		{"serviceaccount", Wanted{Name: "system:serviceaccount:ns:robot"},
			[]string{"|impersonate-on:serviceaccount:list|pods/", "authentication.k8s.io|impersonate:serviceaccount|ns:serviceaccounts/robot"},
			"impersonate:serviceaccount", "system:serviceaccounts,system:serviceaccounts:ns,system:authenticated", ""},
		{"legacy service account with groups", Wanted{Name: "system:serviceaccount:ns:robot", Groups: []string{"x"}},
			[]string{"|impersonate|ns:serviceaccounts/robot", "|impersonate|groups/x"}, "", "x,system:authenticated", ""},
		{"anonymous", Wanted{Name: "system:anonymous"}, []string{"|impersonate|users/system:anonymous"}, "", "system:unauthenticated", ""},
		{"nothing allowed", Wanted{Name: "bob"}, nil, "", "", "impersonate-on:user-info:list"},
	} {
		r := &recorder{allowed: tc.allowed}
		u, verb, d := Check(context.Background(), r, alice, tc.wanted, list)
		if tc.denied != "" {
			if d == nil || (d.Reason != tc.denied && d.Attributes.Verb != tc.denied) {
				t.Errorf("%s: got %+v %+v, want denial %q", tc.name, u, d, tc.denied)
			}
			continue
		}
		if d != nil {
			t.Errorf("%s: denied %+v (checks %q)", tc.name, d, r.seen)
			continue
		}
		if verb != tc.verb || strings.Join(u.Groups, ",") != tc.groups {
			t.Errorf("%s: got %+v via %q, want groups %q via %q", tc.name, u, verb, tc.groups, tc.verb)
		}
	}
}
