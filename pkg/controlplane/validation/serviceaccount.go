package validation

import (
	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateServiceAccountName checks a service account name: a DNS-1123
// subdomain.
var ValidateServiceAccountName = apimachineryvalidation.ValidateServiceAccountName

// ValidateServiceAccount checks a new service account: its metadata
// (upstream checks nothing else; the strategy reduces secret references
// to their names).
func ValidateServiceAccount(sa *corev1.ServiceAccount) field.ErrorList {
	return ValidateObjectMeta(&sa.ObjectMeta, true, ValidateServiceAccountName, metadataPath)
}

// ValidateServiceAccountFields checks a service account but for the
// generic metadata rules.
func ValidateServiceAccountFields(sa *corev1.ServiceAccount) field.ErrorList {
	return ValidateKubeFinalizerNames(sa.Finalizers, metadataPath.Child("finalizers"))
}

// ValidateServiceAccountUpdate checks an update: metadata update rules and
// the new object.
func ValidateServiceAccountUpdate(newSA, oldSA *corev1.ServiceAccount) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newSA.ObjectMeta, &oldSA.ObjectMeta, metadataPath)
	return append(allErrs, ValidateServiceAccount(newSA)...)
}

// ValidateServiceAccountUpdateFields checks an update but for the generic
// metadata rules.
func ValidateServiceAccountUpdateFields(newSA, _ *corev1.ServiceAccount) field.ErrorList {
	return ValidateServiceAccountFields(newSA)
}
