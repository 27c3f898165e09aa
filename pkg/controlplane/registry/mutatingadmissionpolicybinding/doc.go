// Package mutatingadmissionpolicybinding is the storage of
// admissionregistration.k8s.io/v1 MutatingAdmissionPolicyBindings
// (cluster-scoped), with upstream's strategy
// (pkg/registry/admissionregistration/mutatingadmissionpolicybinding).
package mutatingadmissionpolicybinding
