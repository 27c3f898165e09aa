package rbac

import (
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
)

// RuleAllows reports whether rule allows the request described by a.
func RuleAllows(a authorizer.Attributes, rule *rbacv1.PolicyRule) bool {
	if a.ResourceRequest {
		combined := a.Resource
		if a.Subresource != "" {
			combined += "/" + a.Subresource
		}
		return verbMatches(rule, a.Verb) &&
			apiGroupMatches(rule, a.APIGroup) &&
			resourceMatches(rule, combined, a.Subresource) &&
			resourceNameMatches(rule, a.Name)
	}
	return verbMatches(rule, a.Verb) && nonResourceURLMatches(rule, a.Path)
}

func verbMatches(rule *rbacv1.PolicyRule, verb string) bool {
	return slices.Contains(rule.Verbs, rbacv1.VerbAll) || slices.Contains(rule.Verbs, verb)
}

func apiGroupMatches(rule *rbacv1.PolicyRule, group string) bool {
	return slices.Contains(rule.APIGroups, rbacv1.APIGroupAll) || slices.Contains(rule.APIGroups, group)
}

// resourceMatches: "*" matches everything, "pods/log" its subresource, and
// "*/scale" the subresource scale of every resource.
func resourceMatches(rule *rbacv1.PolicyRule, combined, subresource string) bool {
	for _, r := range rule.Resources {
		if r == rbacv1.ResourceAll || r == combined {
			return true
		}
		if subresource != "" && r == "*/"+subresource {
			return true
		}
	}
	return false
}

func resourceNameMatches(rule *rbacv1.PolicyRule, name string) bool {
	return len(rule.ResourceNames) == 0 || slices.Contains(rule.ResourceNames, name)
}

// nonResourceURLMatches: "*" matches every path, "/x/*" every path under
// "/x/", anything else itself only.
func nonResourceURLMatches(rule *rbacv1.PolicyRule, path string) bool {
	for _, u := range rule.NonResourceURLs {
		if u == rbacv1.NonResourceAll || u == path {
			return true
		}
		if strings.HasSuffix(u, "*") && strings.HasPrefix(path, strings.TrimSuffix(u, "*")) {
			return true
		}
	}
	return false
}
