package validation

import (
	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateNamespaceName checks a namespace name: a DNS-1123 label.
var ValidateNamespaceName = apimachineryvalidation.ValidateNamespaceName

// ValidateNamespace checks a new namespace: metadata (cluster-scoped, name
// a DNS-1123 label) and [ValidateNamespaceFields].
func ValidateNamespace(ns *corev1.Namespace) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&ns.ObjectMeta, false, ValidateNamespaceName, metadataPath)
	return append(allErrs, ValidateNamespaceFields(ns)...)
}

// ValidateNamespaceFields checks a namespace but for the generic metadata
// rules: metadata.finalizers and spec.finalizers must be qualified names
// or standard ones. As upstream, spec.finalizers errors are reported at
// spec.finalizers (no index).
func ValidateNamespaceFields(ns *corev1.Namespace) field.ErrorList {
	allErrs := ValidateKubeFinalizerNames(ns.Finalizers, metadataPath.Child("finalizers"))
	specPath := field.NewPath("spec", "finalizers")
	for _, f := range ns.Spec.Finalizers {
		allErrs = append(allErrs, validateFinalizerName(string(f), specPath)...)
	}
	return allErrs
}

// ValidateNamespaceUpdate checks an update of the main resource (whose
// spec.finalizers and status the strategy keeps from the stored object):
// the new object as on create, and the metadata update rules.
func ValidateNamespaceUpdate(newNs, oldNs *corev1.Namespace) field.ErrorList {
	allErrs := ValidateNamespace(newNs)
	return append(allErrs, apimachineryvalidation.ValidateObjectMetaUpdate(&newNs.ObjectMeta, &oldNs.ObjectMeta, metadataPath)...)
}

// ValidateNamespaceUpdateFields is ValidateNamespaceUpdate but for the
// generic metadata rules.
func ValidateNamespaceUpdateFields(newNs, _ *corev1.Namespace) field.ErrorList {
	return ValidateNamespaceFields(newNs)
}

// ValidateNamespaceStatusUpdate checks an update of the status
// subresource: the phase is Active while deletionTimestamp is unset and
// Terminating once it is set. (Upstream reports it at "status.Phase".)
func ValidateNamespaceStatusUpdate(newNs, oldNs *corev1.Namespace) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&newNs.ObjectMeta, &oldNs.ObjectMeta, metadataPath)
	return append(allErrs, validateNamespacePhase(newNs)...)
}

// ValidateNamespaceStatusUpdateFields is ValidateNamespaceStatusUpdate but
// for the generic metadata rules.
func ValidateNamespaceStatusUpdateFields(newNs, _ *corev1.Namespace) field.ErrorList {
	allErrs := ValidateKubeFinalizerNames(newNs.Finalizers, metadataPath.Child("finalizers"))
	return append(allErrs, validateNamespacePhase(newNs)...)
}

func validateNamespacePhase(ns *corev1.Namespace) field.ErrorList {
	phasePath := field.NewPath("status", "Phase")
	if ns.DeletionTimestamp.IsZero() {
		if ns.Status.Phase != corev1.NamespaceActive {
			return field.ErrorList{field.Invalid(phasePath, ns.Status.Phase, "may only be 'Active' if `deletionTimestamp` is empty")}
		}
		return nil
	}
	if ns.Status.Phase != corev1.NamespaceTerminating {
		return field.ErrorList{field.Invalid(phasePath, ns.Status.Phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")}
	}
	return nil
}

// ValidateNamespaceFinalizeUpdate checks an update of the finalize
// subresource: each spec.finalizers entry is a valid finalizer name.
func ValidateNamespaceFinalizeUpdate(newNs, oldNs *corev1.Namespace) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&newNs.ObjectMeta, &oldNs.ObjectMeta, metadataPath)
	return append(allErrs, validateSpecFinalizers(newNs)...)
}

// ValidateNamespaceFinalizeUpdateFields is ValidateNamespaceFinalizeUpdate
// but for the generic metadata rules.
func ValidateNamespaceFinalizeUpdateFields(newNs, _ *corev1.Namespace) field.ErrorList {
	allErrs := ValidateKubeFinalizerNames(newNs.Finalizers, metadataPath.Child("finalizers"))
	return append(allErrs, validateSpecFinalizers(newNs)...)
}

func validateSpecFinalizers(ns *corev1.Namespace) field.ErrorList {
	var allErrs field.ErrorList
	p := field.NewPath("spec", "finalizers")
	for i, f := range ns.Spec.Finalizers {
		allErrs = append(allErrs, validateFinalizerName(string(f), p.Index(i))...)
	}
	return allErrs
}
