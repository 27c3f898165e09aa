package rbac

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// clusterRoleCurrent says "current" exactly when mergeClusterRole would
// change nothing.
func TestClusterRoleCurrent(t *testing.T) {
	var plain, aggregated *rbacv1.ClusterRole
	for _, r := range ClusterRoles() {
		switch {
		case plain == nil && r.AggregationRule == nil && len(r.Rules) > 1 && len(r.Labels) > 0:
			plain = r.DeepCopy()
		case aggregated == nil && r.AggregationRule != nil && len(r.AggregationRule.ClusterRoleSelectors) > 0:
			aggregated = r.DeepCopy()
		}
	}
	if plain == nil || aggregated == nil {
		t.Fatal("no bootstrap ClusterRole with rules and labels, or none aggregated")
	}
	for name, tc := range map[string]struct {
		want   *rbacv1.ClusterRole
		change func(*rbacv1.ClusterRole)
		ok     bool
	}{
		"same": {plain, func(*rbacv1.ClusterRole) {}, true},
		"more rules": {plain, func(r *rbacv1.ClusterRole) {
			r.Rules = append(r.Rules, rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"x"}, Resources: []string{"y"}})
		}, true},
		"rules reordered":       {plain, func(r *rbacv1.ClusterRole) { r.Rules[0], r.Rules[1] = r.Rules[1], r.Rules[0] }, true},
		"a rule missing":        {plain, func(r *rbacv1.ClusterRole) { r.Rules = r.Rules[1:] }, false},
		"a label missing":       {plain, func(r *rbacv1.ClusterRole) { r.Labels = nil }, false},
		"an annotation missing": {plain, func(r *rbacv1.ClusterRole) { r.Annotations = nil }, false},
		"extra label":           {plain, func(r *rbacv1.ClusterRole) { r.Labels["extra"] = "x" }, true},
		"aggregated, same":      {aggregated, func(r *rbacv1.ClusterRole) { r.Rules = []rbacv1.PolicyRule{{Verbs: []string{"get"}}} }, true},
		"no aggregation rule":   {aggregated, func(r *rbacv1.ClusterRole) { r.AggregationRule = nil }, false},
		"a selector missing": {aggregated, func(r *rbacv1.ClusterRole) {
			r.AggregationRule.ClusterRoleSelectors = []metav1.LabelSelector{{MatchLabels: map[string]string{"other": "true"}}}
		}, false},
	} {
		have := tc.want.DeepCopy()
		tc.change(have)
		if got := clusterRoleCurrent(have, tc.want); got != tc.ok {
			t.Errorf("%s: current %v, want %v", name, got, tc.ok)
		}
		// The merge agrees: it changes the object exactly when not current.
		if changed := mergeClusterRole(have.DeepCopy(), tc.want); changed == tc.ok {
			t.Errorf("%s: the merge changes %v while current is %v", name, changed, tc.ok)
		}
	}
	if hasSubjects([]rbacv1.Subject{{Kind: "User", Name: "a"}}, []rbacv1.Subject{{Kind: "User", Name: "a"}, {Kind: "User", Name: "b"}}) {
		t.Error("hasSubjects: a subject missing, yet true")
	}
	if !hasSubjects([]rbacv1.Subject{{Kind: "User", Name: "b"}, {Kind: "User", Name: "a"}}, []rbacv1.Subject{{Kind: "User", Name: "a"}}) {
		t.Error("hasSubjects: every subject there, yet false")
	}
}
