package apps

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
)

var (
	metadataPath = field.NewPath("metadata")
	specPath     = field.NewPath("spec")
	statusPath   = field.NewPath("status")
)

// Messages shared by several kinds (upstream's wording).
const (
	selectorMismatchMsg      = "`selector` does not match template `labels`"
	greaterThanReplicasMsg   = "cannot be greater than status.replicas"
	greaterThanReadyMsg      = "cannot be greater than readyReplicas"
	cannotBeDecrementedMsg   = "cannot be decremented"
	intOrPercentMsg          = "must be an integer or percentage (e.g '5%%')"
	notMoreThan100PercentMsg = "must not be greater than 100%"
)

// nonNegative is apimachinery's ValidateNonnegativeField: "must be
// greater than or equal to 0".
func nonNegative(v int64, fldPath *field.Path) field.ErrorList {
	return apimachineryvalidation.ValidateNonnegativeField(v, fldPath)
}

// deref returns *p, or 0 for nil (an unset replicas reads as 0, as
// upstream's conversion to the internal type does).
func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// intOrZero returns *p, or the zero IntOrString (the integer 0) for nil,
// as upstream's conversion of an unset pointer does.
func intOrZero(p *intstr.IntOrString) intstr.IntOrString {
	if p == nil {
		return intstr.IntOrString{}
	}
	return *p
}

// ValidatePositiveIntOrPercent checks that v is a non-negative integer or
// a valid percentage ("5%").
func ValidatePositiveIntOrPercent(v intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch v.Type {
	case intstr.String:
		for _, msg := range utilvalidation.IsValidPercent(v.StrVal) {
			allErrs = append(allErrs, field.Invalid(fldPath, v, msg))
		}
	case intstr.Int:
		allErrs = append(allErrs, nonNegative(int64(v.IntValue()), fldPath)...)
	default:
		allErrs = append(allErrs, field.Invalid(fldPath, v, intOrPercentMsg))
	}
	return allErrs
}

// percentValue returns the number of a valid percentage.
func percentValue(v intstr.IntOrString) (int, bool) {
	if v.Type != intstr.String || len(utilvalidation.IsValidPercent(v.StrVal)) != 0 {
		return 0, false
	}
	n, _ := strconv.Atoi(v.StrVal[:len(v.StrVal)-1])
	return n, true
}

// intOrPercentValue is the number of v, whether an integer or a
// percentage (0 for anything else).
func intOrPercentValue(v intstr.IntOrString) int {
	if n, ok := percentValue(v); ok {
		return n
	}
	return v.IntValue()
}

// IsNotMoreThan100Percent rejects a percentage over 100%.
func IsNotMoreThan100Percent(v intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	if n, ok := percentValue(v); ok && n > 100 {
		return field.ErrorList{field.Invalid(fldPath, v, notMoreThan100PercentMsg)}
	}
	return nil
}

// validateRequiredSelector is the selector check of deployments,
// replicasets and statefulsets: required, valid (label values checked
// strictly), not empty ("empty selector is invalid for <word>").
func validateRequiredSelector(sel *metav1.LabelSelector, word string, fldPath *field.Path) field.ErrorList {
	if sel == nil {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	allErrs := metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, fldPath)
	if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		allErrs = append(allErrs, field.Invalid(fldPath, sel, "empty selector is invalid for "+word))
	}
	return allErrs
}

// templateLabelsMismatch reports a selector that does not match the
// template's labels at <template>.metadata.labels. An empty selector is not
// checked, as upstream (a nil one selects nothing and is reported).
func templateLabelsMismatch(selector labels.Selector, template *corev1.PodTemplateSpec, fldPath *field.Path) field.ErrorList {
	if selector.Empty() || selector.Matches(labels.Set(template.Labels)) {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath.Child("metadata", "labels"), template.Labels, selectorMismatchMsg)}
}

// ValidatePodTemplateSpecForReplicaSet is the template check of
// deployments and replicasets: the selector matches the template's labels,
// the template is a valid pod template, its restartPolicy is Always and it
// has no activeDeadlineSeconds (the message names "ReplicaSet" for both
// kinds, as upstream's).
func ValidatePodTemplateSpecForReplicaSet(template *corev1.PodTemplateSpec, selector labels.Selector, fldPath *field.Path, opts PodValidationOptions) field.ErrorList {
	allErrs := templateLabelsMismatch(selector, template, fldPath)
	allErrs = append(allErrs, validatePodTemplate(template, fldPath, opts)...)
	allErrs = append(allErrs, validateAlwaysRestart(&template.Spec, fldPath.Child("spec"), "ReplicaSet")...)
	return allErrs
}

// validateAlwaysRestart is the workload rule on a template's pod spec:
// restartPolicy Always (NotSupported otherwise) and no
// activeDeadlineSeconds (Forbidden, naming kind).
func validateAlwaysRestart(spec *corev1.PodSpec, fldPath *field.Path, kind string) field.ErrorList {
	var allErrs field.ErrorList
	if spec.RestartPolicy != corev1.RestartPolicyAlways {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("restartPolicy"), spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if spec.ActiveDeadlineSeconds != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("activeDeadlineSeconds"), "activeDeadlineSeconds in "+kind+" is not Supported"))
	}
	return allErrs
}

// validateCollisionCountUpdate rejects a decremented status.collisionCount.
func validateCollisionCountUpdate(newCount, oldCount *int32) field.ErrorList {
	if !isDecremented(newCount, oldCount) {
		return nil
	}
	return field.ErrorList{field.Invalid(statusPath.Child("collisionCount"), deref(newCount), cannotBeDecrementedMsg)}
}

// isDecremented is upstream's rule: nil after a value, or a smaller value.
func isDecremented(update, old *int32) bool {
	if update == nil && old != nil {
		return true
	}
	if update == nil || old == nil {
		return false
	}
	return *update < *old
}

// metaFields is the core-only metadata rule the generic store does not
// apply: finalizer names are standard or fully qualified.
func metaFields(m *metav1.ObjectMeta) field.ErrorList {
	return validation.ValidateKubeFinalizerNames(m.Finalizers, metadataPath.Child("finalizers"))
}
