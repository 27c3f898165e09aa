package rbacv1

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Expected values from upstream's pkg/apis/rbac/v1/defaults.go
// (SetDefaults_ClusterRoleBinding, SetDefaults_RoleBinding,
// SetDefaults_Subject).
func TestDefaults(t *testing.T) {
	s := runtime.NewScheme()
	if err := RegisterDefaults(s); err != nil {
		t.Fatal(err)
	}
	subjects := func() []rbacv1.Subject {
		return []rbacv1.Subject{{Kind: "User", Name: "u"}, {Kind: "Group", Name: "g"}, {Kind: "ServiceAccount", Name: "sa", Namespace: "ns"},
			{Kind: "User", APIGroup: "kept", Name: "k"}}
	}
	want := []string{rbacv1.GroupName, rbacv1.GroupName, "", "kept"}
	rb := &rbacv1.RoleBindingList{Items: []rbacv1.RoleBinding{{Subjects: subjects()}}}
	crb := &rbacv1.ClusterRoleBinding{Subjects: subjects()}
	s.Default(rb)
	s.Default(crb)
	for i, w := range want {
		if rb.Items[0].Subjects[i].APIGroup != w || crb.Subjects[i].APIGroup != w {
			t.Errorf("subject %d: got %q and %q, want %q", i, rb.Items[0].Subjects[i].APIGroup, crb.Subjects[i].APIGroup, w)
		}
	}
	if rb.Items[0].RoleRef.APIGroup != rbacv1.GroupName || crb.RoleRef.APIGroup != rbacv1.GroupName {
		t.Errorf("roleRef apiGroup: got %q and %q", rb.Items[0].RoleRef.APIGroup, crb.RoleRef.APIGroup)
	}
}
