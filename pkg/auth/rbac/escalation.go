package rbac

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// Covers reports whether owner's rules grant everything servant's do;
// missing are the (broken down, then compacted) rules they do not.
func Covers(owner, servant []rbacv1.PolicyRule) (bool, []rbacv1.PolicyRule) {
	var missing []rbacv1.PolicyRule
	for _, r := range servant {
		for _, sub := range breakdown(r) {
			covered := false
			for i := range owner {
				if ruleCovers(&owner[i], &sub) {
					covered = true
					break
				}
			}
			if !covered {
				missing = append(missing, sub)
			}
		}
	}
	return len(missing) == 0, missing
}

// breakdown splits rule into rules of one verb, one group, one resource
// and one name (or one URL), as upstream's BreakdownRule.
func breakdown(rule rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, g := range rule.APIGroups {
		for _, res := range rule.Resources {
			for _, v := range rule.Verbs {
				if len(rule.ResourceNames) == 0 {
					out = append(out, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{res}, Verbs: []string{v}})
					continue
				}
				for _, n := range rule.ResourceNames {
					out = append(out, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{res}, ResourceNames: []string{n}, Verbs: []string{v}})
				}
			}
		}
	}
	for _, u := range rule.NonResourceURLs {
		for _, v := range rule.Verbs {
			out = append(out, rbacv1.PolicyRule{NonResourceURLs: []string{u}, Verbs: []string{v}})
		}
	}
	return out
}

// ruleCovers reports whether owner grants everything sub (a broken-down
// rule) does.
func ruleCovers(owner, sub *rbacv1.PolicyRule) bool {
	return hasAll(owner.Verbs, sub.Verbs, rbacv1.VerbAll) &&
		hasAll(owner.APIGroups, sub.APIGroups, rbacv1.APIGroupAll) &&
		resourcesCover(owner.Resources, sub.Resources) &&
		urlsCover(owner.NonResourceURLs, sub.NonResourceURLs) &&
		namesCover(owner.ResourceNames, sub.ResourceNames)
}

// namesCover: an owner without names covers every name; an owner with
// names covers only a servant limited to some of them.
func namesCover(owner, want []string) bool {
	if len(owner) == 0 {
		return true
	}
	return len(want) > 0 && hasAll(owner, want, "")
}

func hasAll(set, want []string, star string) bool {
	if star != "" && slices.Contains(set, star) {
		return true
	}
	for _, w := range want {
		if !slices.Contains(set, w) {
			return false
		}
	}
	return true
}

func resourcesCover(owner, want []string) bool {
	if slices.Contains(owner, rbacv1.ResourceAll) {
		return true
	}
	for _, w := range want {
		if slices.Contains(owner, w) {
			continue
		}
		// "*/scale" covers "deployments/scale".
		if i := strings.Index(w, "/"); i >= 0 && slices.Contains(owner, "*"+w[i:]) {
			continue
		}
		return false
	}
	return true
}

func urlsCover(owner, want []string) bool {
	for _, w := range want {
		ok := false
		for _, o := range owner {
			if o == w || o == rbacv1.NonResourceAll || (strings.HasSuffix(o, "*") && strings.HasPrefix(w, strings.TrimSuffix(o, "*"))) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// compact merges broken-down rules that differ only in their verbs (one
// group, one resource, same names), as upstream's CompactRules.
func compact(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	type key struct{ group, resource, names string }
	var out []rbacv1.PolicyRule
	index := map[key]int{}
	for _, r := range rules {
		if len(r.APIGroups) == 1 && len(r.Resources) == 1 && len(r.NonResourceURLs) == 0 {
			k := key{r.APIGroups[0], r.Resources[0], strings.Join(r.ResourceNames, "\x00")}
			if i, ok := index[k]; ok {
				for _, v := range r.Verbs {
					if !slices.Contains(out[i].Verbs, v) {
						out[i].Verbs = append(out[i].Verbs, v)
					}
				}
				continue
			}
			index[k] = len(out)
		}
		out = append(out, *r.DeepCopy())
	}
	return out
}

// CompactString formats a rule as upstream's rbacv1helpers.CompactString:
// {APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}.
func CompactString(r rbacv1.PolicyRule) string {
	var parts []string
	add := func(name string, v []string) {
		if len(v) > 0 {
			parts = append(parts, fmt.Sprintf("%s:%q", name, v))
		}
	}
	add("APIGroups", r.APIGroups)
	add("Resources", r.Resources)
	add("NonResourceURLs", r.NonResourceURLs)
	add("ResourceNames", r.ResourceNames)
	add("Verbs", r.Verbs)
	return "{" + strings.Join(parts, ", ") + "}"
}

// ConfirmNoEscalation returns nil if u holds (in namespace) every rule of
// rules, else the error upstream's registry answers inside its 403:
//
//	user "bob" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:
//	{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}
//
// followed by "; resolution errors: [...]" when resolving u's own rules
// met errors.
func (a *Authorizer) ConfirmNoEscalation(u *user.Info, namespace string, rules []rbacv1.PolicyRule) error {
	owner, errs := a.PolicyRulesFor(u, namespace)
	ok, missing := Covers(owner, rules)
	if ok {
		return nil
	}
	lines := make([]string, 0, len(missing))
	for _, r := range compact(missing) {
		lines = append(lines, CompactString(r))
	}
	slices.Sort(lines)
	name, groups := "", []string(nil)
	if u != nil {
		name, groups = u.Name, u.Groups
	}
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s", name, groups, strings.Join(lines, "\n"))
	if len(errs) > 0 {
		msg += fmt.Sprintf("; resolution errors: %s", aggregateList(errs))
	}
	return fmt.Errorf("%s", msg)
}

func aggregateList(errs []error) string {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}
