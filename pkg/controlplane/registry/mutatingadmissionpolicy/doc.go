// Package mutatingadmissionpolicy is the storage of
// admissionregistration.k8s.io/v1 MutatingAdmissionPolicies
// (cluster-scoped, no status), with upstream's strategy
// (pkg/registry/admissionregistration/mutatingadmissionpolicy):
// generation bumped on spec changes. The MutatingAdmissionPolicy
// admission plugin (package admission/policy/mutating) reads them.
package mutatingadmissionpolicy
