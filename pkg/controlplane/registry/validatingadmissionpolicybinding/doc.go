// Package validatingadmissionpolicybinding is the storage of
// admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBindings
// (cluster-scoped), with upstream's strategy
// (pkg/registry/admissionregistration/validatingadmissionpolicybinding).
package validatingadmissionpolicybinding
