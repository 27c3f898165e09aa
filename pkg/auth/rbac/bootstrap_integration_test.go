package rbac_test

import (
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/internal/testwait"
	"github.com/kapi-dev/kapi/kapitest"
	"github.com/kapi-dev/kapi/pkg/auth/rbac"
)

// TestServerCreatesBootstrapPolicy starts a real server and checks that
// every bootstrap object, the controller roles and the kube-public Role
// included, is stored as the policy says, and that the authorizer
// answers for a controller's service account through a real
// SubjectAccessReview.
func TestServerCreatesBootstrapPolicy(t *testing.T) {
	srv := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := t.Context()

	// The policy is reconciled by a post-start hook: wait for its last
	// object, then compare all of them.
	waitFor(t, "the bootstrap RoleBindings", func() bool {
		for _, want := range rbac.RoleBindings() {
			if _, err := cs.RbacV1().RoleBindings(want.Namespace).Get(ctx, want.Name, metav1.GetOptions{}); err != nil {
				return false
			}
		}
		return true
	})
	for _, want := range rbac.ClusterRoles() {
		got, err := cs.RbacV1().ClusterRoles().Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("ClusterRole %s: %v", want.Name, err)
			continue
		}
		// Aggregated roles get their rules from the aggregation controller.
		if want.AggregationRule == nil && !equality.Semantic.DeepEqual(got.Rules, want.Rules) {
			t.Errorf("ClusterRole %s: rules %+v, want %+v", want.Name, got.Rules, want.Rules)
		}
	}
	for _, want := range rbac.ClusterRoleBindings() {
		got, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("ClusterRoleBinding %s: %v", want.Name, err)
			continue
		}
		if got.RoleRef != want.RoleRef || !equality.Semantic.DeepEqual(got.Subjects, want.Subjects) {
			t.Errorf("ClusterRoleBinding %s: %+v %+v, want %+v %+v", want.Name, got.RoleRef, got.Subjects, want.RoleRef, want.Subjects)
		}
	}
	for _, want := range rbac.Roles() {
		got, err := cs.RbacV1().Roles(want.Namespace).Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("Role %s/%s: %v", want.Namespace, want.Name, err)
			continue
		}
		if !equality.Semantic.DeepEqual(got.Rules, want.Rules) {
			t.Errorf("Role %s/%s: rules %+v, want %+v", want.Namespace, want.Name, got.Rules, want.Rules)
		}
	}

	sa := func(name string) authorizationv1.SubjectAccessReviewSpec {
		return authorizationv1.SubjectAccessReviewSpec{User: "system:serviceaccount:kube-system:" + name,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"}}
	}
	attrs := func(spec authorizationv1.SubjectAccessReviewSpec, verb, group, resource, sub, ns, name string) authorizationv1.SubjectAccessReviewSpec {
		spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Verb: verb, Group: group, Resource: resource,
			Subresource: sub, Namespace: ns, Name: name}
		return spec
	}
	tests := []struct {
		name    string
		spec    authorizationv1.SubjectAccessReviewSpec
		allowed bool
		reason  string
	}{
		{"namespace controller empties a namespace", attrs(sa("namespace-controller"), "deletecollection", "apps", "deployments", "", "x", ""), true,
			`RBAC: allowed by ClusterRoleBinding "system:controller:namespace-controller" of ClusterRole "system:controller:namespace-controller" to ServiceAccount "namespace-controller/kube-system"`},
		{"namespace controller creates nothing", attrs(sa("namespace-controller"), "create", "", "pods", "", "x", ""), false, ""},
		{"job controller of another namespace", attrs(authorizationv1.SubjectAccessReviewSpec{User: "system:serviceaccount:default:job-controller",
			Groups: []string{"system:serviceaccounts", "system:authenticated"}}, "create", "", "pods", "", "x", ""), false, ""},
		{"bootstrap signer updates cluster-info in kube-public", attrs(sa("bootstrap-signer"), "update", "", "configmaps", "", "kube-public", "cluster-info"), true,
			`RBAC: allowed by RoleBinding "system:controller:bootstrap-signer/kube-public" of Role "system:controller:bootstrap-signer" to ServiceAccount "bootstrap-signer/kube-system"`},
		{"bootstrap signer elsewhere", attrs(sa("bootstrap-signer"), "update", "", "configmaps", "", "default", "cluster-info"), false, ""},
		{"leader election controller takes a lease", attrs(sa("leader-election-controller"), "update", "coordination.k8s.io", "leases", "", "kube-system", "kube-controller-manager"), true,
			`RBAC: allowed by RoleBinding "system::leader-locking-kube-controller-manager/kube-system" of Role "system::leader-locking-kube-controller-manager" to ServiceAccount "leader-election-controller/kube-system"`},
	}
	for _, tt := range tests {
		sar, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: tt.spec}, metav1.CreateOptions{})
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if sar.Status.Allowed != tt.allowed || (tt.allowed && sar.Status.Reason != tt.reason) {
			t.Errorf("%s: allowed=%v reason=%q, want allowed=%v reason=%q", tt.name, sar.Status.Allowed, sar.Status.Reason, tt.allowed, tt.reason)
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, 30*time.Second, 50*time.Millisecond, what, cond)
}
