package rbac

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/auth/user"
)

func TestCovers(t *testing.T) {
	tests := []struct {
		name    string
		owner   []rbacv1.PolicyRule
		servant []rbacv1.PolicyRule
		want    bool
		missing []string
	}{
		{"star covers all", []rbacv1.PolicyRule{rr("*", "*", "*")}, []rbacv1.PolicyRule{rr("get delete", "apps", "deployments")}, true, nil},
		{"verbs", []rbacv1.PolicyRule{rr("get", "-", "pods")}, []rbacv1.PolicyRule{rr("get list", "-", "pods")}, false,
			[]string{`{APIGroups:[""], Resources:["pods"], Verbs:["list"]}`}},
		{"split across owner rules", []rbacv1.PolicyRule{rr("get", "-", "pods"), rr("list", "-", "pods")}, []rbacv1.PolicyRule{rr("get list", "-", "pods")}, true, nil},
		{"subresource star", []rbacv1.PolicyRule{rr("get", "apps", "*/scale")}, []rbacv1.PolicyRule{rr("get", "apps", "deployments/scale")}, true, nil},
		{"subresource not the resource", []rbacv1.PolicyRule{rr("get", "apps", "*/scale")}, []rbacv1.PolicyRule{rr("get", "apps", "deployments")}, false,
			[]string{`{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}`}},
		{"names narrower", []rbacv1.PolicyRule{rr("get", "-", "secrets")}, []rbacv1.PolicyRule{rr("get", "-", "secrets", "a")}, true, nil},
		{"names wider", []rbacv1.PolicyRule{rr("get", "-", "secrets", "a")}, []rbacv1.PolicyRule{rr("get", "-", "secrets")}, false,
			[]string{`{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`}},
		{"urls", []rbacv1.PolicyRule{nr("get", "/api/*")}, []rbacv1.PolicyRule{nr("get", "/api/v1 /apis")}, false,
			[]string{`{NonResourceURLs:["/apis"], Verbs:["get"]}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, missing := Covers(tt.owner, tt.servant)
			var ms []string
			for _, m := range compact(missing) {
				ms = append(ms, CompactString(m))
			}
			if got != tt.want || strings.Join(ms, "\n") != strings.Join(tt.missing, "\n") {
				t.Errorf("got %v %q, want %v %q", got, ms, tt.want, tt.missing)
			}
		})
	}
}

func TestConfirmNoEscalation(t *testing.T) {
	l := &staticLister{
		clusterRoles: []*rbacv1.ClusterRole{{ObjectMeta: metav1.ObjectMeta{Name: "pods"}, Rules: []rbacv1.PolicyRule{rr("get list", "-", "pods")}}},
		cluster:      []*rbacv1.ClusterRoleBinding{crb("b", "pods", rbacv1.Subject{Kind: rbacv1.UserKind, Name: "bob"})},
	}
	a := New(l)
	bob := &user.Info{Name: "bob", Groups: []string{"system:authenticated"}}
	if err := a.ConfirmNoEscalation(bob, "ns", []rbacv1.PolicyRule{rr("get", "-", "pods")}); err != nil {
		t.Errorf("held rule: %v", err)
	}
	err := a.ConfirmNoEscalation(bob, "ns", []rbacv1.PolicyRule{rr("get delete", "- apps", "pods secrets")})
	want := `user "bob" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}
{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}
{APIGroups:["apps"], Resources:["pods"], Verbs:["get" "delete"]}
{APIGroups:["apps"], Resources:["secrets"], Verbs:["get" "delete"]}`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want\n%s", err, want)
	}
}
