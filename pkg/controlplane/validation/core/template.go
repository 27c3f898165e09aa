package core

import (
	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kvalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation"
)

// ValidatePodTemplateSpec checks a pod template at fldPath (e.g.
// "spec.template" in a Deployment): labels, annotations, the spec, the
// seccomp and AppArmor annotation/field agreement, and no ephemeral
// containers. opts.RestartPolicies carries the embedding resource's
// restart policy rule.
func ValidatePodTemplateSpec(spec *corev1.PodTemplateSpec, fldPath *field.Path, opts PodValidationOptions) field.ErrorList {
	allErrs := metav1validation.ValidateLabels(spec.Labels, fldPath.Child("labels"))
	allErrs = append(allErrs, validateAnnotations(spec.Annotations, fldPath.Child("annotations"))...)
	allErrs = append(allErrs, ValidatePodSpecificAnnotations(spec.Annotations, &spec.Spec, fldPath.Child("annotations"), opts)...)
	allErrs = append(allErrs, ValidatePodSpec(&spec.Spec, nil, fldPath.Child("spec"), opts)...)
	allErrs = append(allErrs, validateSeccompAnnotationsAndFields(spec.ObjectMeta, &spec.Spec, fldPath.Child("spec"))...)
	allErrs = append(allErrs, validateAppArmorAnnotationsAndFieldsMatchOnCreate(spec.ObjectMeta, &spec.Spec, fldPath.Child("spec"))...)
	if len(spec.Spec.EphemeralContainers) > 0 {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("spec", "ephemeralContainers"), "ephemeral containers not allowed in pod template"))
	}
	return allErrs
}

// ValidationOptionsForPodTemplate returns the options for a template on
// create (old nil) or update of the resource embedding it.
func ValidationOptionsForPodTemplate(spec, old *corev1.PodTemplateSpec) PodValidationOptions {
	if old == nil {
		return ValidationOptionsForPodSpec(&spec.Spec, nil, &spec.ObjectMeta, nil)
	}
	return ValidationOptionsForPodSpec(&spec.Spec, &old.Spec, &spec.ObjectMeta, &old.ObjectMeta)
}

var templatePath = field.NewPath("template")

// ValidatePodTemplate checks a PodTemplate, metadata included.
func ValidatePodTemplate(pt *corev1.PodTemplate, opts PodValidationOptions) field.ErrorList {
	allErrs := kvalidation.ValidateObjectMeta(&pt.ObjectMeta, true, ValidatePodName, metadataPath)
	return append(allErrs, ValidatePodTemplateSpec(&pt.Template, templatePath, opts)...)
}

// ValidatePodTemplateFields is [ValidatePodTemplate] but for the generic
// metadata rules.
func ValidatePodTemplateFields(pt *corev1.PodTemplate, opts PodValidationOptions) field.ErrorList {
	allErrs := metaErrors(&pt.ObjectMeta, nil, false)
	return append(allErrs, ValidatePodTemplateSpec(&pt.Template, templatePath, opts)...)
}

// ValidatePodTemplateUpdate checks an update of a PodTemplate, metadata
// included (a template's spec is not immutable).
func ValidatePodTemplateUpdate(pt, old *corev1.PodTemplate, opts PodValidationOptions) field.ErrorList {
	allErrs := kvalidation.ValidateObjectMetaUpdate(&pt.ObjectMeta, &old.ObjectMeta, metadataPath)
	return append(allErrs, ValidatePodTemplateSpec(&pt.Template, templatePath, opts)...)
}

// ValidatePodTemplateUpdateFields is [ValidatePodTemplateUpdate] but for
// the generic metadata rules.
func ValidatePodTemplateUpdateFields(pt, old *corev1.PodTemplate, opts PodValidationOptions) field.ErrorList {
	allErrs := metaErrors(&pt.ObjectMeta, &old.ObjectMeta, false)
	return append(allErrs, ValidatePodTemplateSpec(&pt.Template, templatePath, opts)...)
}
