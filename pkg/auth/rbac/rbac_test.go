package rbac

import (
	"bufio"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// staticLister serves fixed objects.
type staticLister struct {
	roles        []*rbacv1.Role
	clusterRoles []*rbacv1.ClusterRole
	bindings     []*rbacv1.RoleBinding
	cluster      []*rbacv1.ClusterRoleBinding
}

func (l *staticLister) GetRole(ns, name string) (*rbacv1.Role, error) {
	for _, r := range l.roles {
		if r.Namespace == ns && r.Name == name {
			return r, nil
		}
	}
	return nil, apierrors.NewNotFound(rbacv1.Resource("role"), name)
}

func (l *staticLister) GetClusterRole(name string) (*rbacv1.ClusterRole, error) {
	for _, r := range l.clusterRoles {
		if r.Name == name {
			return r, nil
		}
	}
	return nil, apierrors.NewNotFound(rbacv1.Resource("clusterrole"), name)
}

func (l *staticLister) ListRoleBindings(ns string) ([]*rbacv1.RoleBinding, error) {
	var out []*rbacv1.RoleBinding
	for _, b := range l.bindings {
		if b.Namespace == ns {
			out = append(out, b)
		}
	}
	return out, nil
}

func (l *staticLister) ListClusterRoleBindings() ([]*rbacv1.ClusterRoleBinding, error) {
	return l.cluster, nil
}

// aggregatedPolicy returns the bootstrap ClusterRoles with the aggregated
// ones filled in (repeated until nothing changes, as the controller
// converges).
func aggregatedPolicy() []*rbacv1.ClusterRole {
	var all []*rbacv1.ClusterRole
	for _, r := range ClusterRoles() {
		all = append(all, r.DeepCopy())
	}
	for range 3 {
		for _, r := range all {
			if r.AggregationRule != nil {
				r.Rules = aggregateRules(r, all)
			}
		}
	}
	return all
}

func crb(name, role string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}, Subjects: subjects}
}

func TestDecisionMatrix(t *testing.T) {
	roles := aggregatedPolicy()
	f, err := os.Open("testdata/decisions.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	covered := map[string]bool{}
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "|")
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		u := &user.Info{Name: "tester", Groups: []string{user.AllAuthenticated}}
		var attrs authorizer.Attributes
		var want string
		switch len(fields) {
		case 4:
			attrs = authorizer.Attributes{User: u, Verb: fields[1], Path: fields[2]}
			want = fields[3]
		case 8:
			attrs = authorizer.Attributes{User: u, Verb: fields[1], ResourceRequest: true, APIGroup: fields[2], Resource: fields[3],
				Subresource: fields[4], Namespace: fields[5], Name: fields[6]}
			want = fields[7]
		default:
			t.Fatalf("bad line %q", line)
		}
		role := fields[0]
		covered[role] = true
		a := New(&staticLister{clusterRoles: roles, cluster: []*rbacv1.ClusterRoleBinding{
			crb("b", role, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "tester"})}})
		d, reason, err := a.Authorize(context.Background(), attrs)
		if err != nil {
			t.Errorf("%s: %v", line, err)
		}
		got := "deny"
		if d == authorizer.DecisionAllow {
			got = "allow"
			if want := `RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "` + role + `" to User "tester"`; reason != want {
				t.Errorf("%s: reason %q, want %q", line, reason, want)
			}
		} else if d != authorizer.DecisionNoOpinion {
			t.Errorf("%s: decision %v, want allow or no opinion (RBAC never denies)", line, d)
		}
		if got != want {
			t.Errorf("%s: got %s", line, got)
		}
		n++
	}
	for _, r := range roles {
		if !covered[r.Name] {
			t.Errorf("bootstrap ClusterRole %s has no row in the matrix", r.Name)
		}
	}
	if n < 50 {
		t.Errorf("only %d rows", n)
	}
}

func TestBindingsAndSubjects(t *testing.T) {
	podReader := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pod-reader"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{"p1"}}}}
	l := &staticLister{
		roles:        []*rbacv1.Role{podReader},
		clusterRoles: aggregatedPolicy(),
		bindings: []*rbacv1.RoleBinding{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sa"}, RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "pod-reader"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "robot"}}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sa-group"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: "system:serviceaccounts:ns"}}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "missing"}, RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "gone"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "dan"}}},
		},
		cluster: []*rbacv1.ClusterRoleBinding{
			crb("masters", "cluster-admin", rbacv1.Subject{Kind: rbacv1.GroupKind, Name: "system:masters"}),
			crb("discovery", "system:discovery", rbacv1.Subject{Kind: rbacv1.GroupKind, Name: "system:authenticated"}),
		},
	}
	a := New(l)
	robot := &user.Info{Name: "system:serviceaccount:ns:robot", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ns", user.AllAuthenticated}}
	other := &user.Info{Name: "system:serviceaccount:other:robot", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:other", user.AllAuthenticated}}
	dan := &user.Info{Name: "dan", Groups: []string{user.AllAuthenticated}}
	get := func(u *user.Info, ns, name string) authorizer.Attributes {
		return authorizer.Attributes{User: u, Verb: "get", ResourceRequest: true, Resource: "pods", Namespace: ns, Name: name}
	}
	tests := []struct {
		name   string
		attrs  authorizer.Attributes
		want   authorizer.Decision
		reason string
	}{
		{"sa by name, resourceName", get(robot, "ns", "p1"), authorizer.DecisionAllow, `RBAC: allowed by RoleBinding "sa/ns" of Role "pod-reader" to ServiceAccount "robot/ns"`},
		{"sa group binds view", get(robot, "ns", "p2"), authorizer.DecisionAllow, `RBAC: allowed by RoleBinding "sa-group/ns" of ClusterRole "view" to Group "system:serviceaccounts:ns"`},
		{"sa of another namespace", get(other, "ns", "p1"), authorizer.DecisionNoOpinion, ""},
		{"rolebinding does not reach other namespaces", get(robot, "elsewhere", "p1"), authorizer.DecisionNoOpinion, ""},
		{"binding to a missing role", get(dan, "ns", "p1"), authorizer.DecisionNoOpinion, `RBAC: role.rbac.authorization.k8s.io "gone" not found`},
		{"discovery", authorizer.Attributes{User: dan, Verb: "get", Path: "/apis"}, authorizer.DecisionAllow, `RBAC: allowed by ClusterRoleBinding "discovery" of ClusterRole "system:discovery" to Group "system:authenticated"`},
		{"no user", get(nil, "ns", "p1"), authorizer.DecisionNoOpinion, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, reason, err := a.Authorize(context.Background(), tt.attrs)
			if d != tt.want || reason != tt.reason || err != nil {
				t.Errorf("got (%v, %q, %v), want (%v, %q, nil)", d, reason, err, tt.want, tt.reason)
			}
		})
	}

	// The rules resolver: robot's rules in ns.
	rr, nr, incomplete, err := a.RulesFor(context.Background(), robot, "ns")
	if err != nil || incomplete {
		t.Fatalf("RulesFor: %v %v", incomplete, err)
	}
	if !slices.ContainsFunc(rr, func(r authorizationv1.ResourceRule) bool { return slices.Equal(r.ResourceNames, []string{"p1"}) }) {
		t.Errorf("RulesFor: got %v, want the pod-reader rule", rr)
	}
	if len(nr) != 1 || !slices.Contains(nr[0].NonResourceURLs, "/apis/*") {
		t.Errorf("RulesFor: got non-resource rules %v, want system:discovery's (robot is authenticated)", nr)
	}
	// A missing role makes the answer incomplete.
	if _, _, incomplete, err := a.RulesFor(context.Background(), dan, "ns"); !incomplete || err == nil {
		t.Errorf("RulesFor dan: got incomplete=%v err=%v, want incomplete with an error", incomplete, err)
	}

	// Not ready.
	if d, reason, _ := New(nil).Authorize(context.Background(), get(dan, "ns", "p")); d != authorizer.DecisionNoOpinion || reason != "RBAC: "+errNotReady.Error() {
		t.Errorf("unready: got %v %q", d, reason)
	}
}
