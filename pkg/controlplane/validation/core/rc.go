package core

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	metavalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation/declarative"
)

// ReplicationControllerWarnings are upstream's warnings for a controller:
// a name that is not a DNS label (pods and their hostnames are named
// after it), and those of its pod template ([PodSpecWarnings]).
func ReplicationControllerWarnings(rc *corev1.ReplicationController) []string {
	var out []string
	if msgs := validation.IsDNS1123Label(rc.Name); len(msgs) != 0 {
		out = append(out, fmt.Sprintf("metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: %v", msgs))
	}
	if t := rc.Spec.Template; t != nil {
		out = append(out, PodSpecWarnings(&t.ObjectMeta, &t.Spec, field.NewPath("spec", "template"))...)
	}
	return out
}

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
	return append(allErrs, validateReplicationControllerSpec(&rc.Spec, nil, field.NewPath("spec"))...)
}

// ValidateReplicationControllerFields checks a new controller but for the
// generic metadata rules: minReadySeconds and replicas not negative, a
// non-empty selector, and a pod template whose labels the selector
// matches, valid as a pod template ([ValidatePodTemplateSpec]),
// restarting Always and without activeDeadlineSeconds.
func ValidateReplicationControllerFields(rc *corev1.ReplicationController) field.ErrorList {
	allErrs := metavalidation.ValidateKubeFinalizerNames(rc.Finalizers, field.NewPath("metadata", "finalizers"))
	return append(allErrs, validateReplicationControllerSpec(&rc.Spec, nil, field.NewPath("spec"))...)
}

// ValidateReplicationControllerUpdateFields checks an update of a
// controller but for the generic metadata rules: the new spec as on
// create, the pod template's rules relaxed where the stored template
// already breaks them (upstream has no update-specific rule).
func ValidateReplicationControllerUpdateFields(rc, old *corev1.ReplicationController) field.ErrorList {
	allErrs := metavalidation.ValidateKubeFinalizerNames(rc.Finalizers, field.NewPath("metadata", "finalizers"))
	return append(allErrs, validateReplicationControllerSpec(&rc.Spec, old.Spec.Template, field.NewPath("spec"))...)
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

func validateReplicationControllerSpec(spec *corev1.ReplicationControllerSpec, oldTemplate *corev1.PodTemplateSpec, fldPath *field.Path) field.ErrorList {
	// Upstream's +k8s:minimum=0 (beta) on minReadySeconds and replicas
	// answers these, after the handwritten errors.
	allErrs := declarative.Covered(apimachineryvalidation.ValidateNonnegativeField(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds")))
	if labels.Set(spec.Selector).AsSelector().Empty() {
		allErrs = append(allErrs, field.Required(fldPath.Child("selector"), ""))
	}
	replicas := int32(0)
	if spec.Replicas != nil {
		replicas = *spec.Replicas
	}
	allErrs = append(allErrs, declarative.Covered(apimachineryvalidation.ValidateNonnegativeField(int64(replicas), fldPath.Child("replicas")))...)
	return append(allErrs, validateTemplateForReplicationController(spec.Template, oldTemplate, spec.Selector, fldPath.Child("template"))...)
}

// validateTemplateForReplicationController checks a controller's pod
// template: required, labels matched by the selector, a valid pod
// template restarting Always, no activeDeadlineSeconds (upstream's
// ValidatePodTemplateSpecForRC). oldTemplate is the stored one on
// updates.
func validateTemplateForReplicationController(t, oldTemplate *corev1.PodTemplateSpec, selector map[string]string, fldPath *field.Path) field.ErrorList {
	if t == nil {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var allErrs field.ErrorList
	if sel := labels.Set(selector).AsSelector(); !sel.Empty() && !sel.Matches(labels.Set(t.Labels)) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	opts := ValidationOptionsForPodTemplate(t, oldTemplate)
	opts.RestartPolicies = []corev1.RestartPolicy{corev1.RestartPolicyAlways}
	allErrs = append(allErrs, ValidatePodTemplateSpec(t, fldPath, opts)...)
	if t.Spec.ActiveDeadlineSeconds != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in ReplicationController is not Supported"))
	}
	return allErrs
}
