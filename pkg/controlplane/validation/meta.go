package validation

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// metadataPath is the path of every object's metadata.
var metadataPath = field.NewPath("metadata")

// fieldImmutableWhenImmutableMsg is kube's message for a change to a
// configmap or secret whose `immutable` is set.
const fieldImmutableWhenImmutableMsg = "field is immutable when `immutable` is set"

// standardFinalizers are the finalizer names that need no domain prefix.
var standardFinalizers = map[string]bool{
	string(corev1.FinalizerKubernetes): true,
	metav1.FinalizerOrphanDependents:   true,
	metav1.FinalizerDeleteDependents:   true,
}

// IsStandardFinalizerName reports whether name is one of kube's own
// finalizer names ("kubernetes", "orphan", "foregroundDeletion").
func IsStandardFinalizerName(name string) bool {
	return standardFinalizers[name]
}

// ValidateObjectMeta is core's ObjectMeta validation on create: the
// generic rules of apimachinery plus [ValidateKubeFinalizerNames].
func ValidateObjectMeta(meta *metav1.ObjectMeta, requiresNamespace bool, nameFn apimachineryvalidation.ValidateNameFunc, fldPath *field.Path) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(meta, requiresNamespace, nameFn, fldPath)
	return append(allErrs, ValidateKubeFinalizerNames(meta.Finalizers, fldPath.Child("finalizers"))...)
}

// ValidateObjectMetaUpdate is core's ObjectMeta validation on update: the
// generic rules of apimachinery plus [ValidateKubeFinalizerNames].
func ValidateObjectMetaUpdate(newMeta, oldMeta *metav1.ObjectMeta, fldPath *field.Path) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(newMeta, oldMeta, fldPath)
	return append(allErrs, ValidateKubeFinalizerNames(newMeta.Finalizers, fldPath.Child("finalizers"))...)
}

// ValidateKubeFinalizerNames checks that each finalizer without a "/" is a
// standard one (the rule core resources add to the generic metadata
// validation). fldPath is the list's path; errors are per index.
func ValidateKubeFinalizerNames(finalizers []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, f := range finalizers {
		allErrs = append(allErrs, validateKubeFinalizerName(f, fldPath.Index(i))...)
	}
	return allErrs
}

// validateKubeFinalizerName rejects a short name that is not standard.
func validateKubeFinalizerName(name string, fldPath *field.Path) field.ErrorList {
	if len(strings.Split(name, "/")) == 1 && !IsStandardFinalizerName(name) {
		return field.ErrorList{field.Invalid(fldPath, name, "name is neither a standard finalizer name nor is it fully qualified")}
	}
	return nil
}

// validateFinalizerName is a full finalizer name check: qualified name
// syntax (apimachinery) and the standard-name rule.
func validateFinalizerName(name string, fldPath *field.Path) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateFinalizerName(name, fldPath)
	return append(allErrs, validateKubeFinalizerName(name, fldPath)...)
}

// ValidateImmutableField is apimachinery's: Invalid "field is immutable"
// when the values differ semantically.
func ValidateImmutableField(newVal, oldVal any, fldPath *field.Path) field.ErrorList {
	return apimachineryvalidation.ValidateImmutableField(newVal, oldVal, fldPath)
}
