package rbac

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// TestRoleRefUpdate: kube-apiserver v1.37.2 answered a changed roleRef of
// a RoleBinding and of a ClusterRoleBinding with "roleRef: Invalid value:
// {...}: field is immutable".
func TestRoleRefUpdate(t *testing.T) {
	old := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "r"}
	if errs := ValidateRoleRefUpdate(old, old); len(errs) != 0 {
		t.Errorf("unchanged: %v", errs)
	}
	changed := old
	changed.Name = "other"
	errs := ValidateRoleRefUpdate(changed, old)
	if len(errs) != 1 || errs[0].Field != "roleRef" || errs[0].Detail != "field is immutable" || errs[0].BadValue != any(changed) {
		t.Errorf("changed: %v", errs)
	}
}
