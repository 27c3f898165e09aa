package quota

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Evaluator knows what objects of one resource charge.
type Evaluator interface {
	// MatchingResources returns the names of names this evaluator
	// computes usage for.
	MatchingResources(names []corev1.ResourceName) []corev1.ResourceName
	// Usage is what obj charges (now decides whether a deleted pod still
	// counts).
	Usage(obj runtime.Object, now time.Time) (corev1.ResourceList, error)
	// MatchesScope reports whether obj is in the scope of sel.
	MatchesScope(sel corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error)
	// Constraints returns an error if obj does not say what a quota
	// tracking required needs it to (pods: cpu and memory requests and
	// limits of every container).
	Constraints(required []corev1.ResourceName, obj runtime.Object) error
	// ChargesUpdates reports whether updates change the usage (services,
	// claims); the others are charged on create only.
	ChargesUpdates() bool
}

// For returns the evaluator of resource gr: pods, services and
// persistentvolumeclaims have their own; every other resource is counted
// (count/<resource>[.<group>]).
func For(gr schema.GroupResource) Evaluator {
	if gr.Group == "" {
		switch gr.Resource {
		case "pods":
			return podEvaluator{}
		case "services":
			return serviceEvaluator{}
		case "persistentvolumeclaims":
			return pvcEvaluator{}
		}
	}
	return countEvaluator{names: countNames(gr)}
}

// CountName is the object count resource name of gr: count/<resource>
// for the core group, count/<resource>.<group> otherwise.
func CountName(gr schema.GroupResource) corev1.ResourceName {
	if gr.Group == "" {
		return corev1.ResourceName("count/" + gr.Resource)
	}
	return corev1.ResourceName("count/" + gr.Resource + "." + gr.Group)
}

// legacyCounts are the core resources also counted under their plain
// name (upstream's legacyObjectCountAliases).
var legacyCounts = map[string]corev1.ResourceName{
	"configmaps":             corev1.ResourceConfigMaps,
	"resourcequotas":         corev1.ResourceQuotas,
	"replicationcontrollers": corev1.ResourceReplicationControllers,
	"secrets":                corev1.ResourceSecrets,
	"services":               corev1.ResourceServices,
	"persistentvolumeclaims": corev1.ResourcePersistentVolumeClaims,
}

func countNames(gr schema.GroupResource) []corev1.ResourceName {
	names := []corev1.ResourceName{CountName(gr)}
	if alias, ok := legacyCounts[gr.Resource]; ok && gr.Group == "" {
		names = append(names, alias)
	}
	return names
}

// ParseCountName returns the group-resource a count/<resource>[.<group>]
// name counts.
func ParseCountName(name corev1.ResourceName) (schema.GroupResource, bool) {
	rest, ok := strings.CutPrefix(string(name), "count/")
	if !ok || rest == "" {
		return schema.GroupResource{}, false
	}
	resource, group, _ := strings.Cut(rest, ".")
	return schema.GroupResource{Group: group, Resource: resource}, true
}

// LegacyCountResource returns the core resource a plain count name
// (configmaps, secrets, ...) counts.
func LegacyCountResource(name corev1.ResourceName) (string, bool) {
	for r, n := range legacyCounts {
		if n == name {
			return r, true
		}
	}
	return "", false
}

func intersect(names, known []corev1.ResourceName) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, n := range names {
		if slices.Contains(known, n) {
			out = append(out, n)
		}
	}
	return out
}

// countEvaluator counts objects: any scope fails to match (upstream's
// MatchesNoScopeFunc), so scoped quotas never count them.
type countEvaluator struct{ names []corev1.ResourceName }

func (e countEvaluator) MatchingResources(names []corev1.ResourceName) []corev1.ResourceName {
	return intersect(names, e.names)
}

func (e countEvaluator) Usage(runtime.Object, time.Time) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for _, n := range e.names {
		out[n] = one()
	}
	return out, nil
}

func (countEvaluator) MatchesScope(corev1.ScopedResourceSelectorRequirement, runtime.Object) (bool, error) {
	return false, nil
}
func (countEvaluator) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }
func (countEvaluator) ChargesUpdates() bool                                    { return false }

// ScopeSelectors returns a quota's scopes and scope selector as
// requirements (upstream's GetScopeSelectorsFromQuota).
func ScopeSelectors(q *corev1.ResourceQuota) []corev1.ScopedResourceSelectorRequirement {
	var out []corev1.ScopedResourceSelectorRequirement
	for _, s := range q.Spec.Scopes {
		out = append(out, corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists})
	}
	if q.Spec.ScopeSelector != nil {
		out = append(out, q.Spec.ScopeSelector.MatchExpressions...)
	}
	return out
}

// Matches reports whether quota q constrains obj (upstream's
// generic.Matches): q's status.hard names a resource the evaluator
// computes, and obj is in every scope of q.
func Matches(q *corev1.ResourceQuota, obj runtime.Object, e Evaluator) (bool, error) {
	if len(e.MatchingResources(Names(q.Status.Hard))) == 0 {
		return false, nil
	}
	for _, sel := range ScopeSelectors(q) {
		ok, err := e.MatchesScope(sel, obj)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// selectorMatches evaluates a scope selector requirement on value (the
// PriorityClass scope's In / NotIn / Exists / DoesNotExist).
func selectorMatches(sel corev1.ScopedResourceSelectorRequirement, value string) (bool, error) {
	var op selection.Operator
	switch sel.Operator {
	case corev1.ScopeSelectorOpIn:
		op = selection.In
	case corev1.ScopeSelectorOpNotIn:
		op = selection.NotIn
	case corev1.ScopeSelectorOpExists:
		op = selection.Exists
	case corev1.ScopeSelectorOpDoesNotExist:
		op = selection.DoesNotExist
	default:
		return false, fmt.Errorf("%q is not a valid scope selector operator", sel.Operator)
	}
	req, err := labels.NewRequirement(string(sel.ScopeName), op, sel.Values)
	if err != nil {
		return false, err
	}
	set := labels.Set{}
	if value != "" {
		set[string(sel.ScopeName)] = value
	}
	return labels.NewSelector().Add(*req).Matches(set), nil
}

// isExtendedForQuota: "requests.<extended resource>" (upstream's
// isExtendedResourceNameForQuota; extended resources are quota'd by
// request only).
func isExtendedForQuota(name corev1.ResourceName) bool {
	rest, ok := strings.CutPrefix(string(name), corev1.DefaultResourceRequestsPrefix)
	return ok && isExtended(corev1.ResourceName(rest))
}

// isExtended is upstream's IsExtendedResourceName.
func isExtended(name corev1.ResourceName) bool {
	s := string(name)
	if !strings.Contains(s, "/") || strings.Contains(s, "kubernetes.io/") || strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+s)) == 0
}
