package rbac

import (
	"context"
	"encoding/binary"
	"log/slog"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
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

// Sync brings every aggregated ClusterRole up to date once. The rules are
// computed to their fixed point first (an aggregated role can select
// another: admin selects edit, which selects view), so each role that
// changes is written once, with its final rules, instead of once per
// level of nesting as the roles' watch events come back.
func (a *Aggregator) Sync(ctx context.Context) error {
	stored, err := a.Lister.List(labels.Everything())
	if err != nil {
		return err
	}
	slices.SortFunc(stored, func(x, y *rbacv1.ClusterRole) int { return strings.Compare(x.Name, y.Name) })
	// all is stored with the aggregated roles' rules as computed so far
	// (shallow copies: only Rules is replaced).
	all := make([]*rbacv1.ClusterRole, len(stored))
	for i, role := range stored {
		all[i] = role
		if role.AggregationRule != nil {
			c := *role
			all[i] = &c
		}
	}
	// Each pass settles at least one more level of nesting; a cycle of
	// selections may never settle, so the passes are bounded.
	for pass := 0; pass <= len(all); pass++ {
		changed := false
		for _, role := range all {
			if role.AggregationRule == nil {
				continue
			}
			if rules := aggregateRules(role, all); !sameRules(rules, role.Rules) {
				role.Rules = rules
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	for i, role := range stored {
		if role.AggregationRule == nil || sameRules(all[i].Rules, role.Rules) {
			continue
		}
		// Upstream's controller applies the rules alone, forced, as
		// its own field manager: the role's managed fields say so.
		apply := rbacv1ac.ClusterRole(role.Name).WithRules(applyRules(all[i].Rules)...)
		if _, err := a.Client.RbacV1().ClusterRoles().Apply(ctx, apply, metav1.ApplyOptions{FieldManager: AggregationFieldManager, Force: true}); err != nil {
			return err
		}
	}
	return nil
}

// AggregationFieldManager is the field manager of the aggregated rules
// (upstream's clusterrole-aggregation controller's).
const AggregationFieldManager = "clusterrole-aggregation-controller"

// applyRules is rules as apply configurations.
func applyRules(rules []rbacv1.PolicyRule) []*rbacv1ac.PolicyRuleApplyConfiguration {
	out := make([]*rbacv1ac.PolicyRuleApplyConfiguration, len(rules))
	for i, r := range rules {
		a := rbacv1ac.PolicyRule()
		a.Verbs, a.APIGroups, a.Resources, a.ResourceNames, a.NonResourceURLs = r.Verbs, r.APIGroups, r.Resources, r.ResourceNames, r.NonResourceURLs
		out[i] = a
	}
	return out
}

// sameRules is equality.Semantic.DeepEqual of two rule lists (which
// holds for nil and empty lists alike, and has no special equality for
// any field of a rule), without its reflection: it allocated for every
// rule compared, and the bootstrap reconciliation compares every
// ClusterRole's rules on each start over existing objects.
func sameRules(a, b []rbacv1.PolicyRule) bool {
	return slices.EqualFunc(a, b, func(x, y rbacv1.PolicyRule) bool {
		return slices.Equal(x.Verbs, y.Verbs) && slices.Equal(x.APIGroups, y.APIGroups) &&
			slices.Equal(x.Resources, y.Resources) && slices.Equal(x.ResourceNames, y.ResourceNames) &&
			slices.Equal(x.NonResourceURLs, y.NonResourceURLs)
	})
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
	// seen holds ruleKey of every rule taken: the same test as upstream's
	// equality.Semantic.DeepEqual against each (ruleExists), without the
	// quadratic walk of reflection over every rule taken so far.
	seen := map[string]struct{}{}
	var key []byte
	for _, other := range all {
		if other.Name == role.Name {
			continue
		}
		set := labels.Set(other.Labels)
		if !slices.ContainsFunc(selectors, func(s labels.Selector) bool { return s.Matches(set) }) {
			continue
		}
		for _, r := range other.Rules {
			key = ruleKey(key[:0], &r)
			if _, ok := seen[string(key)]; !ok {
				seen[string(key)] = struct{}{}
				rules = append(rules, r)
			}
		}
	}
	return rules
}

// ruleKey appends to b an encoding of r that two rules share exactly when
// equality.Semantic.DeepEqual holds between them: each list in field
// order, length-prefixed, each string length-prefixed (nil and empty
// lists alike, as Semantic.DeepEqual takes them).
func ruleKey(b []byte, r *rbacv1.PolicyRule) []byte {
	for _, list := range [][]string{r.Verbs, r.APIGroups, r.Resources, r.ResourceNames, r.NonResourceURLs} {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for _, v := range list {
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		}
	}
	return b
}
