package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Core checks other groups reuse (storage.k8s.io, node.k8s.io), as
// upstream's pkg/apis/<group>/validation call pkg/apis/core/validation.

// ValidateCSIDriverName checks a CSI driver name: required, at most 63
// characters, a DNS subdomain once lower-cased (upstream's
// ValidateCSIDriverName).
func ValidateCSIDriverName(driver string, fldPath *field.Path) field.ErrorList {
	return validateCSIDriverName(driver, fldPath)
}

// ValidateInlinePersistentVolumeSpec checks a PersistentVolumeSpec
// embedded in another object (a VolumeAttachment's inlineVolumeSpec), as
// upstream's ValidatePersistentVolumeSpec with an empty volume name and
// default options.
func ValidateInlinePersistentVolumeSpec(spec *corev1.PersistentVolumeSpec, fldPath *field.Path) field.ErrorList {
	return validatePersistentVolumeSpec(spec, "", fldPath, persistentVolumeOptions{})
}

// ValidateOverhead checks a fixed pod overhead (a RuntimeClass's
// overhead.podFixed) as container limits, as upstream's node validation
// does through ValidateResourceRequirements.
func ValidateOverhead(overhead corev1.ResourceList, fldPath *field.Path) field.ErrorList {
	return validateOverhead(overhead, fldPath, DefaultPodValidationOptions())
}

// ValidateTopologySelectorTerm checks one term of a StorageClass's
// allowedTopologies and returns its requirements as key -> values (for
// the caller's duplicate check), as upstream's
// ValidateTopologySelectorTerm: each key a qualified label name, at least
// one value, values unique, keys unique within the term.
func ValidateTopologySelectorTerm(term corev1.TopologySelectorTerm, fldPath *field.Path) (map[string]map[string]bool, field.ErrorList) {
	var allErrs field.ErrorList
	exprMap := map[string]map[string]bool{}
	exprPath := fldPath.Child("matchLabelExpressions")
	for i, req := range term.MatchLabelExpressions {
		idxPath := exprPath.Index(i)
		values, errs := validateTopologySelectorLabelRequirement(req, idxPath)
		allErrs = append(allErrs, errs...)
		if _, dup := exprMap[req.Key]; dup {
			allErrs = append(allErrs, field.Duplicate(idxPath.Child("key"), req.Key))
		}
		exprMap[req.Key] = values
	}
	return exprMap, allErrs
}

func validateTopologySelectorLabelRequirement(req corev1.TopologySelectorLabelRequirement, fldPath *field.Path) (map[string]bool, field.ErrorList) {
	var allErrs field.ErrorList
	values := map[string]bool{}
	valuesPath := fldPath.Child("values")
	if len(req.Values) == 0 {
		allErrs = append(allErrs, field.Required(valuesPath, ""))
	}
	for i, v := range req.Values {
		if values[v] {
			allErrs = append(allErrs, field.Duplicate(valuesPath.Index(i), v))
		}
		values[v] = true
	}
	allErrs = append(allErrs, metav1validation.ValidateLabelName(req.Key, fldPath.Child("key"))...)
	return values, allErrs
}

// SameTopologyTerms reports whether two terms' requirement maps are equal.
func SameTopologyTerms(a, b map[string]map[string]bool) bool {
	return equality.Semantic.DeepEqual(a, b)
}
