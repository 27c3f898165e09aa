package rbac_test

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
	"github.com/kapi-dev/kapi/pkg/auth/rbac"
)

// TestAggregatedRolesReadyWithTheServer checks, as soon as Start returns
// (the server is ready), that each aggregated bootstrap ClusterRole
// (admin, edit, view; edit and view are themselves aggregated into admin
// and edit) holds exactly the rules of the ClusterRoles its selectors
// match: every rule of a matching role is covered, and no rule comes from
// elsewhere. Readiness waits for the first aggregation (the
// rbac/bootstrap-roles hook runs it once the policy is written).
func TestAggregatedRolesReadyWithTheServer(t *testing.T) {
	srv := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	list, err := cs.RbacV1().ClusterRoles().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	aggregated := 0
	for _, role := range list.Items {
		if role.AggregationRule == nil {
			continue
		}
		aggregated++
		var sources []rbacv1.PolicyRule
		for _, other := range list.Items {
			if other.Name != role.Name && selects(t, role.AggregationRule, other.Labels) {
				sources = append(sources, other.Rules...)
			}
		}
		if ok, missing := rbac.Covers(role.Rules, sources); !ok {
			t.Errorf("ClusterRole %s lacks %d rules of the roles it aggregates, the first: %+v", role.Name, len(missing), missing[0])
		}
		for _, r := range role.Rules {
			found := false
			for _, s := range sources {
				if equality.Semantic.DeepEqual(r, s) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("ClusterRole %s has rule %+v of no role it aggregates", role.Name, r)
			}
		}
		if len(role.Rules) == 0 {
			t.Errorf("ClusterRole %s has no rules", role.Name)
		}
		// As upstream records it: the bootstrap's Update by
		// kube-apiserver and the aggregation's forced Apply of the
		// rules alone.
		managers := map[string]string{}
		for _, m := range role.ManagedFields {
			fields := ""
			if m.FieldsV1 != nil {
				fields = string(m.FieldsV1.Raw)
			}
			managers[m.Manager] = string(m.Operation) + " " + m.Subresource + fields
		}
		const wantApply = `Apply {"f:rules":{}}`
		if len(managers) != 2 || !strings.HasPrefix(managers["kube-apiserver"], "Update {") || managers[rbac.AggregationFieldManager] != wantApply {
			t.Errorf("ClusterRole %s managed fields by manager: %v, want an Update by kube-apiserver and %s by %s", role.Name, managers, wantApply, rbac.AggregationFieldManager)
		}
	}
	if aggregated < 3 {
		t.Fatalf("%d aggregated ClusterRoles, want admin, edit and view at least", aggregated)
	}
}

func selects(t *testing.T, rule *rbacv1.AggregationRule, l map[string]string) bool {
	t.Helper()
	for i := range rule.ClusterRoleSelectors {
		s, err := metav1.LabelSelectorAsSelector(&rule.ClusterRoleSelectors[i])
		if err != nil {
			t.Fatal(err)
		}
		if s.Matches(labels.Set(l)) {
			return true
		}
	}
	return false
}
