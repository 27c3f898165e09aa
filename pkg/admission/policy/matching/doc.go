// Package matching is what the ValidatingAdmissionPolicy and
// MutatingAdmissionPolicy plugins share (k8s.io/apiserver
// pkg/admission/plugin/policy/generic and .../policy/matching upstream):
// matching a request against a policy's matchConstraints or a binding's
// matchResources, finding a binding's param objects, and the CEL input
// values (object, oldObject, request, namespaceObject) built from the
// admission attributes.
package matching
