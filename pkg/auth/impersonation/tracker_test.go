package impersonation

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// newTestTracker is a Tracker on a clock that the test moves.
func newTestTracker() (*Tracker, *clocktesting.FakeClock) {
	c := clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0))
	t := NewTracker()
	t.now = c.Now
	return t, c
}

// The mode that last allowed a requestor is tried first, so its refusal is
// the one returned. Golden data: kube-apiserver v1.37.2 with RBAC, bob
// allowed only the legacy impersonate on users/dave, listing pods in
// default: as frank, "pods is forbidden: User "bob" cannot
// impersonate-on:user-info:list resource "pods" ..."; then as dave, 200;
// then as frank again, "users "frank" is forbidden: User "bob" cannot
// impersonate resource "users" in API group "" at the cluster scope".
func TestTrackerLastModeFirst(t *testing.T) {
	tr, _ := newTestTracker()
	bob := &user.Info{Name: "bob", Groups: []string{"group1", user.AllAuthenticated}}
	list := authorizer.Attributes{Verb: "list", ResourceRequest: true, APIVersion: "v1", Resource: "pods", Namespace: "default"}
	r := &recorder{allowed: []string{"|impersonate|users/dave"}}
	ctx := context.Background()

	_, _, d := tr.Check(ctx, r, bob, Wanted{Name: "frank"}, list)
	if d == nil || d.Attributes.Verb != "impersonate-on:user-info:list" || d.Attributes.Resource != "pods" {
		t.Fatalf("first refusal: %+v, want the user-info mode's impersonate-on check", d)
	}
	r.seen = nil
	u, verb, d := tr.Check(ctx, r, bob, Wanted{Name: "dave"}, list)
	if d != nil || u.Name != "dave" || verb != "" {
		t.Fatalf("dave: %+v via %q, %+v", u, verb, d)
	}
	if want := []string{"|impersonate-on:user-info:list|default:pods/", "|impersonate|users/dave"}; !slices.Equal(r.seen, want) {
		t.Errorf("checks %q, want %q", r.seen, want)
	}
	// Legacy is now tried first: one check for dave...
	r.seen = nil
	if _, _, d = tr.Check(ctx, r, bob, Wanted{Name: "dave"}, list); d != nil {
		t.Fatalf("dave again: %+v", d)
	}
	if want := []string{"|impersonate|users/dave"}; !slices.Equal(r.seen, want) {
		t.Errorf("checks %q, want %q", r.seen, want)
	}
	// ...and its refusal is the one returned for frank.
	r.seen = nil
	_, _, d = tr.Check(ctx, r, bob, Wanted{Name: "frank"}, list)
	if d == nil || d.Attributes.Verb != "impersonate" || d.Attributes.Resource != "users" || d.Attributes.Name != "frank" {
		t.Fatalf("frank after dave: %+v, want the legacy check's refusal", d)
	}
	if want := []string{"|impersonate|users/frank", "|impersonate-on:user-info:list|default:pods/"}; !slices.Equal(r.seen, want) {
		t.Errorf("checks %q, want %q", r.seen, want)
	}
	// Another requestor is not affected.
	r.seen = nil
	_, _, d = tr.Check(ctx, r, &user.Info{Name: "carol"}, Wanted{Name: "frank"}, list)
	if d == nil || d.Attributes.Verb != "impersonate-on:user-info:list" {
		t.Fatalf("carol: %+v", d)
	}
	// The package-level Check remembers nothing.
	r.seen = nil
	if _, _, d = Check(ctx, r, bob, Wanted{Name: "frank"}, list); d == nil || d.Attributes.Verb != "impersonate-on:user-info:list" {
		t.Fatalf("Check: %+v", d)
	}
}

// A constrained mode reuses what it allowed for 10 seconds: the whole
// impersonation for the same request, the impersonate:<mode> checks for
// the same user; refusals are not remembered.
func TestTrackerCaches(t *testing.T) {
	tr, clock := newTestTracker()
	alice := &user.Info{Name: "alice", Groups: []string{user.AllAuthenticated}}
	list := authorizer.Attributes{Verb: "list", ResourceRequest: true, APIVersion: "v1", Resource: "pods", Namespace: "default"}
	get := list
	get.Verb, get.Name = "get", "x"
	bob := Wanted{Name: "bob", Groups: []string{"g1"}}
	full := []string{"|impersonate-on:user-info:list|default:pods/", "authentication.k8s.io|impersonate:user-info|users/bob", "authentication.k8s.io|impersonate:user-info|groups/g1"}
	r := &recorder{allowed: append(slices.Clone(full), "|impersonate-on:user-info:get|default:pods/x")}
	ctx := context.Background()
	do := func(what string, a authorizer.Attributes, want []string) {
		t.Helper()
		r.seen = nil
		u, verb, d := tr.Check(ctx, r, alice, bob, a)
		if d != nil || verb != "impersonate:user-info" || u.Name != "bob" || strings.Join(u.Groups, ",") != "g1,system:authenticated" {
			t.Fatalf("%s: %+v via %q, %+v", what, u, verb, d)
		}
		if !slices.Equal(r.seen, want) {
			t.Errorf("%s: checks %q, want %q", what, r.seen, want)
		}
	}
	do("first", list, full)
	do("same request", list, nil)
	do("another request", get, []string{"|impersonate-on:user-info:get|default:pods/x"})
	clock.Step(9 * time.Second)
	do("9s later", get, nil)
	clock.Step(time.Second)
	do("10s later", list, full)

	// A refusal is asked again.
	r.allowed = nil
	for range 2 {
		r.seen = nil
		if _, _, d := tr.Check(ctx, r, alice, Wanted{Name: "carol"}, list); d == nil {
			t.Fatal("carol allowed")
		}
		if want := []string{"|impersonate-on:user-info:list|default:pods/", "|impersonate|users/carol"}; !slices.Equal(r.seen, want) {
			t.Errorf("carol: checks %q, want %q", r.seen, want)
		}
	}
	// A remembered impersonation holds after the grant is gone, for the
	// rest of its 10 seconds, as upstream.
	r.seen = nil
	if u, _, d := tr.Check(ctx, r, alice, bob, list); d != nil || u.Name != "bob" || len(r.seen) != 0 {
		t.Errorf("remembered: %+v %+v, checks %q", u, d, r.seen)
	}
	clock.Step(10 * time.Second)
	if _, _, d := tr.Check(ctx, r, alice, bob, list); d == nil {
		t.Error("allowed 10s after the grant went")
	}
	// Other requestors do not share the entries, nor does the same name
	// with other groups.
	r.allowed = slices.Clone(full)
	do("refill", list, full)
	for _, other := range []*user.Info{{Name: "mallory"}, {Name: "alice", Groups: []string{"x"}}} {
		r.seen = nil
		r.allowed = nil
		if _, _, d := tr.Check(ctx, r, other, bob, list); d == nil {
			t.Errorf("%+v used alice's entry", other)
		}
	}
}

// associated-node remembers one answer per service account (and extra
// keys) for every node: a daemon set's pod on another node reuses it, and
// is served as its own node.
func TestTrackerAssociatedNodeCache(t *testing.T) {
	tr, _ := newTestTracker()
	pod := func(node string) *user.Info {
		return &user.Info{Name: "system:serviceaccount:kube-system:agent", UID: "sa-uid", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"},
			Extra: map[string][]string{NodeNameKey: {node}, "authentication.kubernetes.io/pod-name": {"agent-" + node}}}
	}
	get := authorizer.Attributes{Verb: "get", ResourceRequest: true, APIVersion: "v1", Resource: "nodes", Name: "self"}
	const keys = " authentication.kubernetes.io/node-name,authentication.kubernetes.io/pod-name"
	full := []string{"|impersonate-on:associated-node:get|nodes/self" + keys, "authentication.k8s.io|impersonate:associated-node|nodes/*" + keys}
	r := &recorder{allowed: full}
	ctx := context.Background()
	u, verb, d := tr.Check(ctx, r, pod("n1"), Wanted{Name: "system:node:n1"}, get)
	if d != nil || u.Name != "system:node:n1" || verb != "impersonate:associated-node" || !slices.Equal(r.seen, full) {
		t.Fatalf("n1: %+v via %q %+v, checks %q", u, verb, d, r.seen)
	}
	r.seen = nil
	u, _, d = tr.Check(ctx, r, pod("n2"), Wanted{Name: "system:node:n2"}, get)
	if d != nil || u.Name != "system:node:n2" || strings.Join(u.Groups, ",") != "system:nodes,system:authenticated" || len(r.seen) != 0 {
		t.Fatalf("n2: %+v %+v, checks %q", u, d, r.seen)
	}
	// The node asked for must still be the pod's own.
	r.seen = nil
	if _, _, d = tr.Check(ctx, r, pod("n2"), Wanted{Name: "system:node:n1"}, get); d == nil {
		t.Fatal("a pod on n2 impersonated n1")
	}
}

func TestModeIndexEvictsLeastRecentlyUsed(t *testing.T) {
	m := newModeIndex(2)
	m.set("a", 1)
	m.set("b", 2)
	if v, ok := m.get("a"); !ok || v != 1 {
		t.Fatalf("a: %d %v", v, ok)
	}
	m.set("c", 3) // b is the least recently used
	if _, ok := m.get("b"); ok {
		t.Error("b kept")
	}
	if v, ok := m.get("a"); !ok || v != 1 {
		t.Errorf("a: %d %v", v, ok)
	}
	if v, ok := m.get("c"); !ok || v != 3 {
		t.Errorf("c: %d %v", v, ok)
	}
}

// Concurrent requests share the caches safely (run with -race), and what
// one caller does to its user does not reach another's.
func TestTrackerConcurrent(t *testing.T) {
	tr := NewTracker()
	alice := &user.Info{Name: "alice"}
	list := authorizer.Attributes{Verb: "list", ResourceRequest: true, APIVersion: "v1", Resource: "pods"}
	authz := authorizerFunc(func(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
		return authorizer.DecisionAllow, "", nil
	})
	done := make(chan string)
	for range 8 {
		go func() {
			groups := ""
			for range 50 {
				u, _, d := tr.Check(context.Background(), authz, alice, Wanted{Name: "bob", Groups: []string{"g"}}, list)
				if d != nil {
					groups = d.Reason
					break
				}
				groups = strings.Join(u.Groups, ",")
				u.Groups[0] = "changed" // a caller's own copy
				u.Groups = append(u.Groups, "mine")
			}
			done <- groups
		}()
	}
	for range 8 {
		if g := <-done; g != "g,system:authenticated" {
			t.Errorf("groups %q, want g,system:authenticated", g)
		}
	}
}

// The whole-request cache tells requests apart by their selectors too,
// and does not remember a request whose selectors did not fully parse
// (upstream's buildKey, apiserver endpoints/filters/impersonation/cache.go
// v1.37.2).
func TestTrackerCacheKeySelectors(t *testing.T) {
	tr, _ := newTestTracker()
	alice := &user.Info{Name: "alice", Groups: []string{user.AllAuthenticated}}
	bob := Wanted{Name: "bob"}
	list := authorizer.Attributes{Verb: "list", ResourceRequest: true, APIVersion: "v1", Resource: "pods", Namespace: "default"}
	withLabels := func(raw string) authorizer.Attributes {
		a := list
		a.LabelSelector, a.LabelSelectorErr = authorizer.ParseLabelSelector(raw)
		return a
	}
	onList := "|impersonate-on:user-info:list|default:pods/"
	r := &recorder{allowed: []string{onList, "authentication.k8s.io|impersonate:user-info|users/bob"}}
	ctx := context.Background()
	for _, c := range []struct {
		what string
		a    authorizer.Attributes
		want []string // checks made
	}{
		{"a=1 first", withLabels("a=1"), []string{onList, "authentication.k8s.io|impersonate:user-info|users/bob"}},
		{"a=1 again", withLabels("a=1"), nil},
		{"a=2", withLabels("a=2"), []string{onList}}, // the user-only cache answers the rest
		{"unparsable", withLabels("a in"), []string{onList}},
		{"unparsable again", withLabels("a in"), []string{onList}},
	} {
		r.seen = nil
		if u, _, d := tr.Check(ctx, r, alice, bob, c.a); d != nil || u.Name != "bob" {
			t.Fatalf("%s: %+v %+v", c.what, u, d)
		}
		if !slices.Equal(r.seen, c.want) {
			t.Errorf("%s: checks %q, want %q", c.what, r.seen, c.want)
		}
	}
}
