package rbac

import (
	"context"
	"log/slog"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
)

// Aggregator keeps the rules of aggregated ClusterRoles (those with an
// aggregationRule) equal to the union of the rules of the ClusterRoles
// their selectors match, as upstream's clusterrole-aggregation controller:
// the roles are taken in name order, a rule already present is not
// repeated, and an aggregated role never aggregates itself.
type Aggregator struct {
	Client kubernetes.Interface
	Lister rbaclisters.ClusterRoleLister
	Logger *slog.Logger
}

// Sync brings every aggregated ClusterRole up to date once.
func (a *Aggregator) Sync(ctx context.Context) error {
	all, err := a.Lister.List(labels.Everything())
	if err != nil {
		return err
	}
	slices.SortFunc(all, func(x, y *rbacv1.ClusterRole) int { return strings.Compare(x.Name, y.Name) })
	for _, role := range all {
		if role.AggregationRule == nil {
			continue
		}
		rules := aggregateRules(role, all)
		if equality.Semantic.DeepEqual(rules, role.Rules) || (len(rules) == 0 && len(role.Rules) == 0) {
			continue
		}
		updated := role.DeepCopy()
		updated.Rules = rules
		if _, err := a.Client.RbacV1().ClusterRoles().Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

func aggregateRules(role *rbacv1.ClusterRole, all []*rbacv1.ClusterRole) []rbacv1.PolicyRule {
	var selectors []labels.Selector
	for i := range role.AggregationRule.ClusterRoleSelectors {
		s, err := metav1.LabelSelectorAsSelector(&role.AggregationRule.ClusterRoleSelectors[i])
		if err == nil {
			selectors = append(selectors, s)
		}
	}
	var rules []rbacv1.PolicyRule
	for _, other := range all {
		if other.Name == role.Name {
			continue
		}
		set := labels.Set(other.Labels)
		if !slices.ContainsFunc(selectors, func(s labels.Selector) bool { return s.Matches(set) }) {
			continue
		}
		for _, r := range other.Rules {
			if !slices.ContainsFunc(rules, func(h rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(h, r) }) {
				rules = append(rules, r)
			}
		}
	}
	return rules
}
