package apps

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/core"
)

// PodValidationOptions are the options of pod template validation (core's:
// what a stored template lets an update keep, and --allow-privileged). The
// workloads state their restart policy rule themselves, after core's
// checks, as upstream's apps validation does; RestartPolicies is left
// empty.
type PodValidationOptions = core.PodValidationOptions

// validatePodTemplate checks a workload's pod template as a pod template
// (core's ValidatePodTemplateSpec: labels, annotations, the pod spec).
func validatePodTemplate(t *corev1.PodTemplateSpec, fldPath *field.Path, opts PodValidationOptions) field.ErrorList {
	return core.ValidatePodTemplateSpec(t, fldPath, opts)
}

// validatePodTemplateMeta checks a template's labels and annotations, the
// pod-specific annotations included (the paths are upstream's:
// <template>.labels and <template>.annotations).
func validatePodTemplateMeta(t *corev1.PodTemplateSpec, fldPath *field.Path, opts PodValidationOptions) field.ErrorList {
	allErrs := metav1validation.ValidateLabels(t.Labels, fldPath.Child("labels"))
	allErrs = append(allErrs, apimachineryvalidation.ValidateAnnotations(t.Annotations, fldPath.Child("annotations"))...)
	return append(allErrs, core.ValidatePodSpecificAnnotations(t.Annotations, &t.Spec, fldPath.Child("annotations"), opts)...)
}

// templatesEqual compares two pod templates semantically.
func templatesEqual(a, b *corev1.PodTemplateSpec) bool {
	return equality.Semantic.DeepEqual(a, b)
}
