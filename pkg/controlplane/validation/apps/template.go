package apps

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PodValidationOptions are the options of pod template validation.
type PodValidationOptions struct {
	AllowInvalidLabelValueInSelector bool
}

// validatePodTemplate checks a workload's pod template as a pod template.
func validatePodTemplate(t *corev1.PodTemplateSpec, fldPath *field.Path, opts PodValidationOptions) field.ErrorList {
	_, _, _ = t, fldPath, opts // pkg/controlplane/validation/core lands with the pods branch
	return nil
}

// validatePodTemplateMeta checks a template's labels and annotations (the
// paths are upstream's: <template>.labels and <template>.annotations).
func validatePodTemplateMeta(t *corev1.PodTemplateSpec, fldPath *field.Path, opts PodValidationOptions) field.ErrorList {
	allErrs := metav1validation.ValidateLabels(t.Labels, fldPath.Child("labels"))
	allErrs = append(allErrs, apimachineryvalidation.ValidateAnnotations(t.Annotations, fldPath.Child("annotations"))...)
	_ = opts
	return allErrs
}

// templatesEqual compares two pod templates semantically.
func templatesEqual(a, b *corev1.PodTemplateSpec) bool {
	return equality.Semantic.DeepEqual(a, b)
}
