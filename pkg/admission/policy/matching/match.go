package matching

import (
	"context"
	"slices"
	"strings"

	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// Matcher is a policy's matchConstraints or a binding's matchResources
// (upstream's generic policy matcher).
type Matcher struct {
	rules, exclude []arv1.NamedRuleWithOperations
	ns, obj        labels.Selector
	// equivalent is matchPolicy Equivalent (unset is Exact, as upstream's
	// matcher reads it; the API defaults it to Equivalent).
	equivalent bool
}

// NewMatcher compiles m's selectors.
func NewMatcher(m *arv1.MatchResources) (*Matcher, error) {
	out := &Matcher{rules: m.ResourceRules, exclude: m.ExcludeResourceRules, ns: labels.Everything(), obj: labels.Everything(),
		equivalent: m.MatchPolicy != nil && *m.MatchPolicy == arv1.Equivalent}
	var err error
	if m.NamespaceSelector != nil {
		if out.ns, err = metav1.LabelSelectorAsSelector(m.NamespaceSelector); err != nil {
			return nil, err
		}
	}
	if m.ObjectSelector != nil {
		if out.obj, err = metav1.LabelSelectorAsSelector(m.ObjectSelector); err != nil {
			return nil, err
		}
	}
	return out, nil
}

var namespacesResource = schema.GroupResource{Resource: "namespaces"}

// Matches reports whether a is matched as it is (its own resource and
// kind). ns is the request's namespace object (nil for cluster-scoped
// requests or when it is missing).
func (m *Matcher) Matches(a *admission.Attributes, ns *corev1.Namespace) bool {
	_, ok := m.MatchesAs(a, ns, nil)
	return ok
}

// MatchesAs reports whether a is matched, and as what: the request's
// resource and kind, or with matchPolicy Equivalent one of eqs (the
// request's equivalent resources, read on first use; nil: none), to which
// the objects are then converted. The order is upstream's (k8s.io/apiserver
// pkg/admission/plugin/policy/matching): selectors, excluded rules (the
// request's resource only), rules, then rules on equivalent resources,
// earlier rules first.
func (m *Matcher) MatchesAs(a *admission.Attributes, ns *corev1.Namespace, eqs func() []admission.Equivalent) (admission.Equivalent, bool) {
	self := admission.Equivalent{Resource: a.Resource, Kind: a.Kind}
	if !m.ns.Empty() {
		switch {
		case a.Resource.GroupResource() == namespacesResource && a.Subresource == "":
			o := a.Object
			if o == nil {
				o = a.OldObject
			}
			if n, ok := o.(*corev1.Namespace); ok && !m.ns.Matches(labels.Set(n.Labels)) {
				return admission.Equivalent{}, false
			}
		case a.Namespace != "":
			if ns == nil || !m.ns.Matches(labels.Set(ns.Labels)) {
				return admission.Equivalent{}, false
			}
		}
	}
	if !m.obj.Empty() && !labelsMatch(m.obj, a.Object) && !labelsMatch(m.obj, a.OldObject) {
		return admission.Equivalent{}, false
	}
	if slices.ContainsFunc(m.exclude, func(r arv1.NamedRuleWithOperations) bool { return namedRuleMatches(&r, a, a.Resource) }) {
		return admission.Equivalent{}, false
	}
	// No rules (a binding's matchResources may have none): everything the
	// policy matches.
	if len(m.rules) == 0 || slices.ContainsFunc(m.rules, func(r arv1.NamedRuleWithOperations) bool { return namedRuleMatches(&r, a, a.Resource) }) {
		return self, true
	}
	if !m.equivalent || eqs == nil {
		return admission.Equivalent{}, false
	}
	others := eqs()
	for i := range m.rules {
		for _, eq := range others {
			if eq.Resource.Version != a.Resource.Version && namedRuleMatches(&m.rules[i], a, eq.Resource) {
				return eq, true
			}
		}
	}
	return admission.Equivalent{}, false
}

func labelsMatch(s labels.Selector, obj runtime.Object) bool {
	if obj == nil {
		return false
	}
	m, err := meta.Accessor(obj)
	return err == nil && s.Matches(labels.Set(m.GetLabels()))
}

// namedRuleMatches reports whether r matches a, with gvr as a's resource.
func namedRuleMatches(r *arv1.NamedRuleWithOperations, a *admission.Attributes, gvr schema.GroupVersionResource) bool {
	if len(r.ResourceNames) > 0 && !slices.Contains(r.ResourceNames, a.Name) {
		return false
	}
	if !slices.Contains(r.Operations, arv1.OperationAll) && !slices.Contains(r.Operations, arv1.OperationType(a.Operation)) {
		return false
	}
	if !anyOf(r.APIGroups, gvr.Group) || !anyOf(r.APIVersions, gvr.Version) {
		return false
	}
	if !slices.ContainsFunc(r.Resources, func(s string) bool { return resourceMatches(s, gvr.Resource, a.Subresource) }) {
		return false
	}
	scope := arv1.AllScopes
	if r.Scope != nil {
		scope = *r.Scope
	}
	isNamespace := gvr.GroupResource() == namespacesResource
	switch scope {
	case arv1.ClusterScope:
		return isNamespace || a.Namespace == ""
	case arv1.NamespacedScope:
		return !isNamespace && a.Namespace != ""
	}
	return true
}

func anyOf(list []string, v string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, v)
}

// resourceMatches: "*" is any resource without subresource, "*/*" any,
// "x/*" x and its subresources, "*/y" subresource y of any resource.
func resourceMatches(rule, resource, sub string) bool {
	res, s, _ := strings.Cut(rule, "/")
	return (res == "*" || res == resource) && (s == "*" || s == sub)
}

// NamespaceOf reads the request's namespace object (nil when
// cluster-scoped or missing).
func NamespaceOf(ctx context.Context, get NamespaceGetter, a *admission.Attributes) *corev1.Namespace {
	if a.Namespace == "" || get == nil {
		return nil
	}
	if a.Resource.GroupResource() == namespacesResource {
		if n, ok := a.Object.(*corev1.Namespace); ok {
			return n
		}
	}
	ns, err := get(ctx, a.Namespace)
	if err != nil {
		return nil
	}
	return ns
}

// NamespaceGetter reads a namespace.
type NamespaceGetter func(ctx context.Context, name string) (*corev1.Namespace, error)
