package batch

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PodTemplateValidator validates a pod template (core's
// ValidatePodTemplateSpec), given the old template on update (nil on
// create).
type PodTemplateValidator func(template, old *corev1.PodTemplateSpec, fldPath *field.Path) field.ErrorList

// Options are the switches of Job validation upstream derives from feature
// gates and from the stored object (JobValidationOptions).
type Options struct {
	// PodTemplate validates the pod template; nil checks only what this
	// package checks of it.
	PodTemplate PodTemplateValidator
	// AllowInvalidLabelValueInSelector accepts selector values that are not
	// valid label values (an update of an object stored with one).
	AllowInvalidLabelValueInSelector bool
	// AllowMutableSchedulingDirectives lets an update change the
	// template's node affinity, node selector, tolerations, labels,
	// annotations and scheduling gates (a suspended Job that never
	// started).
	AllowMutableSchedulingDirectives bool
	// AllowElasticIndexedJobs lets an Indexed Job change completions
	// together with parallelism (ElasticIndexedJob, GA and on in v1.37).
	AllowElasticIndexedJobs bool
	// RequirePrefixedLabels requires the batch.kubernetes.io/job-name and
	// batch.kubernetes.io/controller-uid template labels (not on an
	// update of a Job stored without them).
	RequirePrefixedLabels bool
}

func (o Options) template(t, old *corev1.PodTemplateSpec, fldPath *field.Path) field.ErrorList {
	if o.PodTemplate == nil {
		return nil
	}
	return o.PodTemplate(t, old, fldPath)
}
