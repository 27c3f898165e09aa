package rbac

import (
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// TestRuleKeyIsSemanticEquality checks ruleKey against the test upstream's
// aggregation uses (equality.Semantic.DeepEqual) on every pair of a set of
// rules that differ in one field, in order, in nil against empty, and in
// where one string ends and the next starts.
func TestRuleKeyIsSemanticEquality(t *testing.T) {
	t.Parallel()
	if n := reflect.TypeFor[rbacv1.PolicyRule]().NumField(); n != 5 {
		t.Fatalf("rbacv1.PolicyRule has %d fields, ruleKey encodes 5", n)
	}
	rules := []rbacv1.PolicyRule{
		{},
		{Verbs: []string{}},
		{Verbs: []string{"get"}},
		{Verbs: []string{"get", "list"}},
		{Verbs: []string{"list", "get"}},
		{Verbs: []string{"getlist"}},
		{Verbs: []string{"get"}, APIGroups: []string{""}},
		{Verbs: []string{"get"}, APIGroups: []string{}},
		{Verbs: []string{"get"}, Resources: []string{""}},
		{Verbs: []string{"get"}, Resources: []string{"pods"}},
		{Verbs: []string{"get"}, ResourceNames: []string{"pods"}},
		{Verbs: []string{"get"}, NonResourceURLs: []string{"pods"}},
		{Verbs: []string{"get", ""}, APIGroups: []string{"a"}},
		{Verbs: []string{"get"}, APIGroups: []string{"", "a"}},
	}
	for i := range rules {
		for j := range rules {
			want := equality.Semantic.DeepEqual(rules[i], rules[j])
			got := string(ruleKey(nil, &rules[i])) == string(ruleKey(nil, &rules[j]))
			if got != want {
				t.Errorf("rules %d %+v and %d %+v: same key %v, Semantic.DeepEqual %v", i, rules[i], j, rules[j], got, want)
			}
		}
	}
}

// sameRules is equality.Semantic.DeepEqual of rule lists: on every pair of
// the lists made of the rules above (one or two rules, nil and empty).
func TestSameRulesIsSemanticEquality(t *testing.T) {
	t.Parallel()
	if n := reflect.TypeFor[rbacv1.PolicyRule]().NumField(); n != 5 {
		t.Fatalf("rbacv1.PolicyRule has %d fields, sameRules compares 5", n)
	}
	rules := []rbacv1.PolicyRule{
		{},
		{Verbs: []string{}},
		{Verbs: []string{"get"}},
		{Verbs: []string{"get", "list"}},
		{Verbs: []string{"list", "get"}},
		{Verbs: []string{"get"}, APIGroups: []string{""}},
		{Verbs: []string{"get"}, APIGroups: []string{}},
		{Verbs: []string{"get"}, Resources: []string{"pods"}},
		{Verbs: []string{"get"}, ResourceNames: []string{"pods"}},
		{Verbs: []string{"get"}, NonResourceURLs: []string{"pods"}},
	}
	lists := [][]rbacv1.PolicyRule{nil, {}}
	for i := range rules {
		lists = append(lists, rules[i:i+1])
		for j := range rules {
			lists = append(lists, []rbacv1.PolicyRule{rules[i], rules[j]})
		}
	}
	for i, a := range lists {
		for j, b := range lists {
			if got, want := sameRules(a, b), equality.Semantic.DeepEqual(a, b); got != want {
				t.Errorf("lists %d %+v and %d %+v: sameRules %v, Semantic.DeepEqual %v", i, a, j, b, got, want)
			}
		}
	}
}
