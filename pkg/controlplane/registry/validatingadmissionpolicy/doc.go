// Package validatingadmissionpolicy is the storage of
// admissionregistration.k8s.io/v1 ValidatingAdmissionPolicies
// (cluster-scoped) and their status subresource, with upstream's strategy
// (pkg/registry/admissionregistration/validatingadmissionpolicy): status
// reset on create and kept on spec updates, generation bumped on spec
// changes. The ValidatingAdmissionPolicy admission plugin writes the
// type-checking status.
package validatingadmissionpolicy
