package matching

import (
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// Variables of the policies' expressions, as upstream names them.
const (
	VarObject          = "object"
	VarOldObject       = "oldObject"
	VarRequest         = "request"
	VarParams          = "params"
	VarNamespaceObject = "namespaceObject"
	VarVariables       = "variables"
)

// ObjectValue is obj as the JSON map CEL sees (nil for a nil object),
// with apiVersion and kind set from a when the object lacks them. The map
// is a copy: changing it does not change obj.
func ObjectValue(obj runtime.Object, a *admission.Attributes) (map[string]any, error) {
	if obj == nil {
		return nil, nil
	}
	var m map[string]any
	if u, ok := obj.(*unstructured.Unstructured); ok {
		m = runtime.DeepCopyJSON(u.Object)
	} else {
		var err error
		if m, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return nil, err
		}
	}
	if s, _ := m["apiVersion"].(string); s == "" {
		m["apiVersion"] = a.Kind.GroupVersion().String()
	}
	if s, _ := m["kind"].(string); s == "" {
		m["kind"] = a.Kind.Kind
	}
	return m, nil
}

// NamespaceValue is the namespaceObject variable (nil without a
// namespace).
func NamespaceValue(ns *corev1.Namespace) (map[string]any, error) {
	if ns == nil {
		return nil, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ns)
	if err != nil {
		return nil, err
	}
	m["apiVersion"], m["kind"] = "v1", "Namespace"
	return m, nil
}

// RequestValue is the request variable (upstream's AdmissionRequest
// fields).
func RequestValue(a *admission.Attributes) map[string]any {
	req := map[string]any{
		"kind":      map[string]any{"group": a.Kind.Group, "version": a.Kind.Version, "kind": a.Kind.Kind},
		"resource":  map[string]any{"group": a.Resource.Group, "version": a.Resource.Version, "resource": a.Resource.Resource},
		"name":      a.Name,
		"namespace": a.Namespace,
		"operation": string(a.Operation),
		"dryRun":    a.DryRun,
	}
	req["requestKind"], req["requestResource"] = req["kind"], req["resource"]
	if a.Subresource != "" {
		req["subResource"], req["requestSubResource"] = a.Subresource, a.Subresource
	}
	if a.User != nil {
		ui := authenticationv1.UserInfo{Username: a.User.Name, UID: a.User.UID, Groups: a.User.Groups}
		if len(a.User.Extra) > 0 {
			ui.Extra = map[string]authenticationv1.ExtraValue{}
			for k, v := range a.User.Extra {
				ui.Extra[k] = v
			}
		}
		m, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(&ui)
		req["userInfo"] = m
	}
	return req
}

// Exempt: policies never apply to the admission configuration resources
// themselves, as upstream.
func Exempt(a *admission.Attributes) bool {
	if a.Resource.Group != "admissionregistration.k8s.io" {
		return false
	}
	switch a.Resource.Resource {
	case "mutatingwebhookconfigurations", "validatingwebhookconfigurations",
		"validatingadmissionpolicies", "validatingadmissionpolicybindings",
		"mutatingadmissionpolicies", "mutatingadmissionpolicybindings":
		return true
	}
	return false
}
