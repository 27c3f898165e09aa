package node

import (
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kvalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation/core"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation/declarative"
)

// ValidateRuntimeClass checks a class with its metadata.
func ValidateRuntimeClass(rc *nodev1.RuntimeClass) field.ErrorList {
	allErrs := kvalidation.ValidateObjectMeta(&rc.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, ValidateRuntimeClassFields(rc)...)
}

// ValidateRuntimeClassFields: handler a DNS label; overhead.podFixed valid
// as container limits; scheduling's node selector valid labels and its
// tolerations valid and unique.
func ValidateRuntimeClassFields(rc *nodev1.RuntimeClass) field.ErrorList {
	// Upstream's +k8s:required and +k8s:format=k8s-short-name (beta) on
	// RuntimeClass.handler answer these.
	var allErrs field.ErrorList
	if rc.Handler == "" {
		allErrs = append(allErrs, declarative.Required(field.NewPath("handler")))
	} else {
		for _, msg := range apimachineryvalidation.NameIsDNSLabel(rc.Handler, false) {
			allErrs = append(allErrs, field.Invalid(field.NewPath("handler"), rc.Handler, msg).WithOrigin("format=k8s-short-name").MarkCoveredByDeclarative().MarkBeta())
		}
	}
	if rc.Overhead != nil {
		allErrs = append(allErrs, core.ValidateOverhead(rc.Overhead.PodFixed, field.NewPath("overhead"))...)
	}
	if s := rc.Scheduling; s != nil {
		p := field.NewPath("scheduling")
		if s.NodeSelector != nil {
			allErrs = append(allErrs, metav1validation.ValidateLabels(s.NodeSelector, p.Child("nodeSelector"))...)
		}
		allErrs = append(allErrs, validateTolerations(s.Tolerations, p.Child("tolerations"))...)
	}
	return allErrs
}

// validateTolerations checks each toleration as a pod's, and reports a
// toleration whose key, operator, value and effect repeat an earlier one
// as Duplicate (the list keys of the API).
func validateTolerations(tolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	allErrs := core.ValidateTolerations(tolerations, fldPath)
	type key struct {
		k, op, v, effect string
	}
	seen := map[key]bool{}
	for i, t := range tolerations {
		k := key{t.Key, string(t.Operator), t.Value, string(t.Effect)}
		if seen[k] {
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), t))
		}
		seen[k] = true
	}
	return allErrs
}

// ValidateRuntimeClassUpdateFields: handler never changes.
func ValidateRuntimeClassUpdateFields(rc, old *nodev1.RuntimeClass) field.ErrorList {
	// +k8s:immutable (beta) on RuntimeClass.handler.
	if rc.Handler != old.Handler {
		return field.ErrorList{declarative.Immutable(field.NewPath("handler"))}
	}
	return nil
}
