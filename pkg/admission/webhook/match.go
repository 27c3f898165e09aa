package webhook

import (
	"context"
	"slices"
	"strings"

	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// NamespaceLabels returns the labels of a namespace (a missing namespace
// is an error for which apierrors.IsNotFound is true).
type NamespaceLabels func(ctx context.Context, name string) (map[string]string, error)

var namespacesResource = schema.GroupResource{Resource: "namespaces"}

// exempt are the resources no webhook sees, as upstream exempts its
// admission configuration resources (so a webhook cannot lock itself in).
func exempt(gr schema.GroupResource) bool {
	if gr.Group != arv1.GroupName {
		return false
	}
	switch gr.Resource {
	case "mutatingwebhookconfigurations", "validatingwebhookconfigurations",
		"validatingadmissionpolicies", "validatingadmissionpolicybindings",
		"mutatingadmissionpolicies", "mutatingadmissionpolicybindings":
		return true
	}
	return false
}

// ruleMatches reports whether r matches the operation, resource,
// subresource and scope of a (upstream's rules.Matcher).
func ruleMatches(r *arv1.RuleWithOperations, a *admission.Attributes, gvr schema.GroupVersionResource) bool {
	if !slices.Contains(r.Operations, arv1.OperationAll) && !slices.Contains(r.Operations, arv1.OperationType(a.Operation)) {
		return false
	}
	if !matchOne(r.APIGroups, gvr.Group) || !matchOne(r.APIVersions, gvr.Version) {
		return false
	}
	if !resourceMatches(r.Resources, gvr.Resource, a.Subresource) {
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

func matchOne(list []string, v string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, v)
}

func resourceMatches(list []string, resource, sub string) bool {
	for _, r := range list {
		switch {
		case r == "*/*":
			return true
		case r == "*":
			if sub == "" {
				return true
			}
			continue
		}
		res, s, hasSub := strings.Cut(r, "/")
		if !hasSub {
			if sub == "" && res == resource {
				return true
			}
			continue
		}
		if (res == "*" || res == resource) && (s == "*" || s == sub) {
			return true
		}
	}
	return false
}

// namespaceMatches applies the webhook's namespaceSelector: cluster-scoped
// objects always match; a namespace is matched by its own labels; other
// objects by their namespace's.
func namespaceMatches(ctx context.Context, h *Hook, a *admission.Attributes, nsLabels NamespaceLabels) (bool, error) {
	if h.NamespaceSelector.Empty() {
		return true, nil
	}
	if a.Resource.GroupResource() == namespacesResource && a.Subresource == "" {
		obj := a.Object
		if obj == nil {
			obj = a.OldObject
		}
		if ns, ok := obj.(*corev1.Namespace); ok {
			return h.NamespaceSelector.Matches(labels.Set(ns.Labels)), nil
		}
		return true, nil
	}
	if a.Namespace == "" {
		return true, nil
	}
	l, err := nsLabels(ctx, a.Namespace)
	if err != nil {
		return false, err
	}
	return h.NamespaceSelector.Matches(labels.Set(l)), nil
}

// objectMatches applies the objectSelector to the new and the old object.
func objectMatches(h *Hook, a *admission.Attributes) bool {
	if h.ObjectSelector.Empty() {
		return true
	}
	return labelsMatch(h.ObjectSelector, a.Object) || labelsMatch(h.ObjectSelector, a.OldObject)
}

func labelsMatch(s labels.Selector, obj runtime.Object) bool {
	if obj == nil {
		return false
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	return s.Matches(labels.Set(m.GetLabels()))
}
