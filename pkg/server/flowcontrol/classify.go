package flowcontrol

import (
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
)

// Request is what classification looks at.
type Request struct {
	User   string
	Groups []string

	IsResourceRequest bool
	// Verb is the request verb (get, list, watch, create, ...; for
	// non-resource requests the lowercase HTTP method).
	Verb string
	// APIGroup, Resource, Subresource and Namespace of resource requests.
	APIGroup    string
	Resource    string
	Subresource string
	Namespace   string
	// Path of non-resource requests.
	Path string
}

// schema is a digested FlowSchema.
type schema struct {
	obj  *flowcontrolv1.FlowSchema
	name string
	uid  string
	// uidValues is []string{uid}, the response header's value (see
	// Classification.FlowSchemaUIDValues).
	uidValues []string
	prec      int32
	plName    string
	method    flowcontrolv1.FlowDistinguisherMethodType // "" : no distinguisher
	rules     []flowcontrolv1.PolicyRulesWithSubjects
	fm        *flowMetrics
}

// sortSchemas orders schemas as upstream: matching precedence ascending,
// then name.
func sortSchemas(s []*schema) {
	slices.SortStableFunc(s, func(a, b *schema) int {
		if a.prec != b.prec {
			if a.prec < b.prec {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
}

// matches reports whether one of the schema's rules matches r.
func (s *schema) matches(r *Request) bool {
	for i := range s.rules {
		if ruleMatches(&s.rules[i], r) {
			return true
		}
	}
	return false
}

func ruleMatches(rule *flowcontrolv1.PolicyRulesWithSubjects, r *Request) bool {
	if !subjectsMatch(rule.Subjects, r) {
		return false
	}
	if r.IsResourceRequest {
		for i := range rule.ResourceRules {
			if resourceRuleMatches(&rule.ResourceRules[i], r) {
				return true
			}
		}
		return false
	}
	for i := range rule.NonResourceRules {
		if nonResourceRuleMatches(&rule.NonResourceRules[i], r) {
			return true
		}
	}
	return false
}

func subjectsMatch(subjects []flowcontrolv1.Subject, r *Request) bool {
	for i := range subjects {
		s := &subjects[i]
		switch s.Kind {
		case flowcontrolv1.SubjectKindUser:
			if s.User != nil && (s.User.Name == flowcontrolv1.NameAll || s.User.Name == r.User) {
				return true
			}
		case flowcontrolv1.SubjectKindGroup:
			if s.Group == nil {
				continue
			}
			if s.Group.Name == flowcontrolv1.NameAll || slices.Contains(r.Groups, s.Group.Name) {
				return true
			}
		case flowcontrolv1.SubjectKindServiceAccount:
			if s.ServiceAccount != nil && serviceAccountMatches(s.ServiceAccount, r.User) {
				return true
			}
		}
	}
	return false
}

const saPrefix = "system:serviceaccount:"

// serviceAccountMatches: the user is system:serviceaccount:<ns>:<name>
// with the subject's namespace and name ("*" for any name).
func serviceAccountMatches(sa *flowcontrolv1.ServiceAccountSubject, user string) bool {
	rest, ok := strings.CutPrefix(user, saPrefix)
	if !ok {
		return false
	}
	ns, name, ok := strings.Cut(rest, ":")
	if !ok || ns != sa.Namespace {
		return false
	}
	return sa.Name == flowcontrolv1.NameAll || sa.Name == name
}

func verbMatches(verbs []string, verb string) bool {
	for _, v := range verbs {
		if v == flowcontrolv1.VerbAll || v == verb {
			return true
		}
	}
	return false
}

func resourceRuleMatches(rule *flowcontrolv1.ResourcePolicyRule, r *Request) bool {
	if !verbMatches(rule.Verbs, r.Verb) {
		return false
	}
	if !slices.Contains(rule.APIGroups, flowcontrolv1.APIGroupAll) && !slices.Contains(rule.APIGroups, r.APIGroup) {
		return false
	}
	resource := r.Resource
	if r.Subresource != "" {
		resource += "/" + r.Subresource
	}
	if !slices.Contains(rule.Resources, flowcontrolv1.ResourceAll) && !slices.Contains(rule.Resources, resource) {
		return false
	}
	if r.Namespace == "" {
		return rule.ClusterScope
	}
	return slices.Contains(rule.Namespaces, flowcontrolv1.NamespaceEvery) || slices.Contains(rule.Namespaces, r.Namespace)
}

func nonResourceRuleMatches(rule *flowcontrolv1.NonResourcePolicyRule, r *Request) bool {
	if !verbMatches(rule.Verbs, r.Verb) {
		return false
	}
	for _, u := range rule.NonResourceURLs {
		switch {
		case u == flowcontrolv1.NonResourceAll || u == r.Path:
			return true
		case strings.HasSuffix(u, "/*"):
			prefix := strings.TrimSuffix(u, "*")
			if strings.HasPrefix(r.Path, prefix) || r.Path+"/" == prefix {
				return true
			}
		}
	}
	return false
}

// flowDistinguisher is the part of the flow key the schema's method takes
// from the request: the user name, the namespace, or nothing.
func flowDistinguisher(method flowcontrolv1.FlowDistinguisherMethodType, r *Request) string {
	switch method {
	case flowcontrolv1.FlowDistinguisherMethodByUserType:
		return r.User
	case flowcontrolv1.FlowDistinguisherMethodByNamespaceType:
		return r.Namespace
	}
	return ""
}
