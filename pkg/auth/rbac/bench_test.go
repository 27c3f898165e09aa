package rbac

import (
	"context"
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// benchLister is the informer-backed lister the server uses, filled with
// the bootstrap policy plus n namespaced Roles and n RoleBindings (in
// n/10 namespaces) and n/10 ClusterRoles and n/10 ClusterRoleBindings,
// none of which applies to the user authorized.
func benchLister(b *testing.B, n int) InformerLister {
	nsIndex := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	roles, croles := cache.NewIndexer(cache.MetaNamespaceKeyFunc, nsIndex), cache.NewIndexer(cache.MetaNamespaceKeyFunc, nsIndex)
	rbs, crbs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, nsIndex), cache.NewIndexer(cache.MetaNamespaceKeyFunc, nsIndex)
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, r := range aggregatedPolicy() {
		must(croles.Add(r))
	}
	for _, crb := range ClusterRoleBindings() {
		must(crbs.Add(crb.DeepCopy()))
	}
	for i := range n {
		ns := fmt.Sprintf("ns-%d", i%(n/10))
		rule := rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{fmt.Sprintf("res-%d", i)}}
		must(roles.Add(&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("role-%d", i)}, Rules: []rbacv1.PolicyRule{rule}}))
		must(rbs.Add(&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("rb-%d", i)},
			RoleRef: rbacv1.RoleRef{Kind: "Role", Name: fmt.Sprintf("role-%d", i)}, Subjects: []rbacv1.Subject{{Kind: "User", Name: fmt.Sprintf("user-%d", i)}}}))
	}
	for i := range n / 10 {
		must(croles.Add(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("crole-%d", i)},
			Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{"x"}, Resources: []string{"y"}}}}))
		must(crbs.Add(&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("crb-%d", i)},
			RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: fmt.Sprintf("crole-%d", i)}, Subjects: []rbacv1.Subject{{Kind: "Group", Name: fmt.Sprintf("group-%d", i)}}}))
	}
	// The user benchmarked: bound to view in ns-0 by one more binding.
	must(rbs.Add(&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-0", Name: "bench-view"},
		RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"}, Subjects: []rbacv1.Subject{{Kind: "User", Name: "bench"}}}))
	return InformerLister{
		Roles: rbaclisters.NewRoleLister(roles), ClusterRoles: rbaclisters.NewClusterRoleLister(croles),
		RoleBindings: rbaclisters.NewRoleBindingLister(rbs), ClusterRoleBindings: rbaclisters.NewClusterRoleBindingLister(crbs),
	}
}

// BenchmarkAuthorize measures one RBAC decision with 1,000 Roles and
// 1,000 RoleBindings (100 namespaces), 100 more ClusterRoles and
// ClusterRoleBindings and the bootstrap policy: an allowed request (view
// in ns-0), a denied one in the same namespace, and a discovery request
// allowed by a ClusterRoleBinding.
func BenchmarkAuthorize(b *testing.B) {
	a := New(benchLister(b, 1000))
	u := &user.Info{Name: "bench", Groups: []string{user.AllAuthenticated}}
	for _, c := range []struct {
		name  string
		attrs authorizer.Attributes
		want  authorizer.Decision
	}{
		{"allowed", authorizer.Attributes{User: u, Verb: "list", ResourceRequest: true, Resource: "pods", Namespace: "ns-0"}, authorizer.DecisionAllow},
		{"denied", authorizer.Attributes{User: u, Verb: "delete", ResourceRequest: true, Resource: "pods", Namespace: "ns-0", Name: "p"}, authorizer.DecisionNoOpinion},
		{"discovery", authorizer.Attributes{User: u, Verb: "get", Path: "/apis"}, authorizer.DecisionAllow},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				if d, _, _ := a.Authorize(ctx, c.attrs); d != c.want {
					b.Fatalf("got %v, want %v", d, c.want)
				}
			}
		})
	}
}
