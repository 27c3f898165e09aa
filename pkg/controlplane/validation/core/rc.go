package core

import (
	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	metavalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation"
)

// Validation of core/v1 replication controllers, as upstream's
// ValidateReplicationController, ValidateReplicationControllerUpdate and
// ValidateReplicationControllerStatusUpdate (kubernetes
// pkg/apis/core/validation, v1.37).

// ValidateReplicationControllerName checks a controller's name: a DNS
// subdomain.
var ValidateReplicationControllerName = apimachineryvalidation.NameIsDNSSubdomain

// ValidateReplicationController checks a new controller: metadata and
// [ValidateReplicationControllerFields].
func ValidateReplicationController(rc *corev1.ReplicationController) field.ErrorList {
	allErrs := metavalidation.ValidateObjectMeta(&rc.ObjectMeta, true, ValidateReplicationControllerName, field.NewPath("metadata"))
	return append(allErrs, validateReplicationControllerSpec(&rc.Spec, field.NewPath("spec"))...)
}

// ValidateReplicationControllerFields checks a controller but for the
// generic metadata rules: minReadySeconds and replicas not negative, a
// non-empty selector, and a pod template whose labels the selector
// matches, restarting Always and without activeDeadlineSeconds.
func ValidateReplicationControllerFields(rc *corev1.ReplicationController) field.ErrorList {
	allErrs := metavalidation.ValidateKubeFinalizerNames(rc.Finalizers, field.NewPath("metadata", "finalizers"))
	return append(allErrs, validateReplicationControllerSpec(&rc.Spec, field.NewPath("spec"))...)
}

// ValidateReplicationControllerUpdateFields checks an update of a
// controller but for the generic metadata rules: the new spec as on
// create (upstream has no update-specific rule).
func ValidateReplicationControllerUpdateFields(rc, _ *corev1.ReplicationController) field.ErrorList {
	return ValidateReplicationControllerFields(rc)
}

// ValidateReplicationControllerStatusUpdateFields checks a status update
// of a controller but for the generic metadata rules: counts not
// negative, no count above status.replicas, available not above ready.
func ValidateReplicationControllerStatusUpdateFields(rc, _ *corev1.ReplicationController) field.ErrorList {
	allErrs := metavalidation.ValidateKubeFinalizerNames(rc.Finalizers, field.NewPath("metadata", "finalizers"))
	return append(allErrs, validateReplicationControllerStatus(&rc.Status, field.NewPath("status"))...)
}

func validateReplicationControllerStatus(s *corev1.ReplicationControllerStatus, fldPath *field.Path) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateNonnegativeField(int64(s.Replicas), fldPath.Child("replicas"))
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(s.FullyLabeledReplicas), fldPath.Child("fullyLabeledReplicas"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(s.ReadyReplicas), fldPath.Child("readyReplicas"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(s.AvailableReplicas), fldPath.Child("availableReplicas"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(s.ObservedGeneration, fldPath.Child("observedGeneration"))...)
	const msg = "cannot be greater than status.replicas"
	if s.FullyLabeledReplicas > s.Replicas {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("fullyLabeledReplicas"), s.FullyLabeledReplicas, msg))
	}
	if s.ReadyReplicas > s.Replicas {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("readyReplicas"), s.ReadyReplicas, msg))
	}
	if s.AvailableReplicas > s.Replicas {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("availableReplicas"), s.AvailableReplicas, msg))
	}
	if s.AvailableReplicas > s.ReadyReplicas {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("availableReplicas"), s.AvailableReplicas, "cannot be greater than readyReplicas"))
	}
	return allErrs
}

func validateReplicationControllerSpec(spec *corev1.ReplicationControllerSpec, fldPath *field.Path) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateNonnegativeField(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))
	if labels.Set(spec.Selector).AsSelector().Empty() {
		allErrs = append(allErrs, field.Required(fldPath.Child("selector"), ""))
	}
	replicas := int32(0)
	if spec.Replicas != nil {
		replicas = *spec.Replicas
	}
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(replicas), fldPath.Child("replicas"))...)
	return append(allErrs, validateTemplateForReplicationController(spec.Template, spec.Selector, fldPath.Child("template"))...)
}

// validateTemplateForReplicationController checks a controller's pod
// template: required, labels matched by the selector, a valid pod
// template, restart policy Always, no activeDeadlineSeconds.
func validateTemplateForReplicationController(t *corev1.PodTemplateSpec, selector map[string]string, fldPath *field.Path) field.ErrorList {
	if t == nil {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var allErrs field.ErrorList
	if sel := labels.Set(selector).AsSelector(); !sel.Empty() && !sel.Matches(labels.Set(t.Labels)) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	allErrs = append(allErrs, metav1validation.ValidateLabels(t.Labels, fldPath.Child("labels"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateAnnotations(t.Annotations, fldPath.Child("annotations"))...)
	if t.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("spec", "restartPolicy"), t.Spec.RestartPolicy, []corev1.RestartPolicy{corev1.RestartPolicyAlways}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in ReplicationController is not Supported"))
	}
	return allErrs
}
