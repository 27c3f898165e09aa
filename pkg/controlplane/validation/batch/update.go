package batch

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
)

// ValidateJobUpdate checks an update of a Job, its metadata included.
func ValidateJobUpdate(job, old *batchv1.Job, opts Options) field.ErrorList {
	allErrs := validation.ValidateObjectMetaUpdate(&job.ObjectMeta, &old.ObjectMeta, metadataPath)
	return append(allErrs, validateJobUpdate(job, old, opts)...)
}

// ValidateJobUpdateFields checks an update of a Job but for the generic
// metadata rules: the new Job as on create (ValidateJob's rules but the
// metadata) and what may not change.
func ValidateJobUpdateFields(job, old *batchv1.Job, opts Options) field.ErrorList {
	allErrs := validation.ValidateKubeFinalizerNames(job.Finalizers, metadataPath.Child("finalizers"))
	return append(allErrs, validateJobUpdate(job, old, opts)...)
}

func validateJobUpdate(job, old *batchv1.Job, opts Options) field.ErrorList {
	// Upstream's strategy runs ValidateJob and then ValidateJobUpdate,
	// which validates the spec again: spec errors are reported twice, as
	// upstream does.
	allErrs := validateJob(job, old, opts)
	allErrs = append(allErrs, validateJobSpecUpdate(&job.Spec, &old.Spec, specPath, opts)...)
	return allErrs
}

func validateJobSpecUpdate(spec, old *batchv1.JobSpec, fldPath *field.Path, opts Options) field.ErrorList {
	allErrs := validateJobSpecWithSelector(spec, old, fldPath, opts)
	allErrs = append(allErrs, validateCompletions(spec, old, fldPath.Child("completions"), opts)...)
	allErrs = append(allErrs, validation.ValidateImmutableField(spec.Selector, old.Selector, fldPath.Child("selector"))...)
	allErrs = append(allErrs, validatePodTemplateUpdate(spec, old, fldPath, opts)...)
	allErrs = append(allErrs, validation.ValidateImmutableField(spec.CompletionMode, old.CompletionMode, fldPath.Child("completionMode"))...)
	allErrs = append(allErrs, validation.ValidateImmutableField(spec.PodFailurePolicy, old.PodFailurePolicy, fldPath.Child("podFailurePolicy"))...)
	allErrs = append(allErrs, validation.ValidateImmutableField(spec.BackoffLimitPerIndex, old.BackoffLimitPerIndex, fldPath.Child("backoffLimitPerIndex"))...)
	allErrs = append(allErrs, validation.ValidateImmutableField(spec.ManagedBy, old.ManagedBy, fldPath.Child("managedBy"))...)
	allErrs = append(allErrs, validation.ValidateImmutableField(spec.SuccessPolicy, old.SuccessPolicy, fldPath.Child("successPolicy"))...)
	return allErrs
}

// validatePodTemplateUpdate: the template is immutable, but for the
// scheduling directives of a suspended Job that never started.
func validatePodTemplateUpdate(spec, old *batchv1.JobSpec, fldPath *field.Path, opts Options) field.ErrorList {
	template, oldTemplate := &spec.Template, &old.Template
	if opts.AllowMutableSchedulingDirectives {
		oldTemplate = old.Template.DeepCopy()
		switch {
		case template.Spec.Affinity == nil && oldTemplate.Spec.Affinity != nil:
			// Clearing the affinity is allowed if it held node affinity only.
			oldTemplate.Spec.Affinity.NodeAffinity = nil
			if *oldTemplate.Spec.Affinity == (corev1.Affinity{}) {
				oldTemplate.Spec.Affinity = nil
			}
		case template.Spec.Affinity != nil && oldTemplate.Spec.Affinity == nil:
			oldTemplate.Spec.Affinity = &corev1.Affinity{NodeAffinity: template.Spec.Affinity.NodeAffinity}
		case template.Spec.Affinity != nil && oldTemplate.Spec.Affinity != nil:
			oldTemplate.Spec.Affinity.NodeAffinity = template.Spec.Affinity.NodeAffinity
		}
		oldTemplate.Spec.NodeSelector = template.Spec.NodeSelector
		oldTemplate.Spec.Tolerations = template.Spec.Tolerations
		oldTemplate.Annotations = template.Annotations
		oldTemplate.Labels = template.Labels
		oldTemplate.Spec.SchedulingGates = template.Spec.SchedulingGates
	}
	return validation.ValidateImmutableField(template, oldTemplate, fldPath.Child("template"))
}

// validateCompletions: completions is immutable, but an Indexed Job may
// change it together with parallelism (elastic Indexed Jobs).
func validateCompletions(spec, old *batchv1.JobSpec, fldPath *field.Path, opts Options) field.ErrorList {
	indexed := ptr.Deref(spec.CompletionMode, "") == batchv1.IndexedCompletion
	if !opts.AllowElasticIndexedJobs || !indexed {
		return validation.ValidateImmutableField(spec.Completions, old.Completions, fldPath)
	}
	if equality.Semantic.DeepEqual(spec.Completions, old.Completions) || spec.Completions == nil {
		// A nil completions of an Indexed Job is reported by the spec's
		// validation.
		return nil
	}
	if spec.Parallelism == nil || *spec.Completions != *spec.Parallelism {
		return field.ErrorList{field.Invalid(fldPath, spec.Completions,
			fmt.Sprintf("can only be modified in tandem with %s", fldPath.Root().Child("parallelism")))}
	}
	return nil
}
