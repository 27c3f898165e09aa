package batchv1

import (
	"math"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	defaultscorev1 "github.com/kapi-dev/kapi/pkg/api/defaults/corev1"
)

// RegisterDefaults registers the covering defaulters of Job, JobList,
// CronJob and CronJobList on s, as upstream's generated RegisterDefaults.
func RegisterDefaults(s *runtime.Scheme) error {
	s.AddTypeDefaultingFunc(&batchv1.Job{}, func(obj any) { SetObjectDefaults_Job(obj.(*batchv1.Job)) })
	s.AddTypeDefaultingFunc(&batchv1.JobList{}, func(obj any) { SetObjectDefaults_JobList(obj.(*batchv1.JobList)) })
	s.AddTypeDefaultingFunc(&batchv1.CronJob{}, func(obj any) { SetObjectDefaults_CronJob(obj.(*batchv1.CronJob)) })
	s.AddTypeDefaultingFunc(&batchv1.CronJobList{}, func(obj any) { SetObjectDefaults_CronJobList(obj.(*batchv1.CronJobList)) })
	return nil
}

// SetDefaults_Job defaults a Job's spec as upstream:
//   - completions and parallelism both 1 when neither is set, else
//     parallelism 1 when unset (completions stays unset: a work queue);
//   - backoffLimit 6, or MaxInt32 when backoffLimitPerIndex is set (the
//     per-index limit governs then);
//   - the Job's labels are the template's when the Job has none;
//   - completionMode NonIndexed, suspend false, manualSelector false;
//   - podReplacementPolicy Failed with a podFailurePolicy (the only value
//     validation accepts then), TerminatingOrFailed without one.
func SetDefaults_Job(obj *batchv1.Job) {
	spec := &obj.Spec
	if spec.Completions == nil && spec.Parallelism == nil {
		spec.Completions = ptr.To[int32](1)
		spec.Parallelism = ptr.To[int32](1)
	}
	if spec.Parallelism == nil {
		spec.Parallelism = ptr.To[int32](1)
	}
	if spec.BackoffLimit == nil {
		if spec.BackoffLimitPerIndex != nil {
			spec.BackoffLimit = ptr.To[int32](math.MaxInt32)
		} else {
			spec.BackoffLimit = ptr.To[int32](6)
		}
	}
	if spec.Template.Labels != nil && len(obj.Labels) == 0 {
		obj.Labels = spec.Template.Labels
	}
	if spec.CompletionMode == nil {
		spec.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
	}
	if spec.Suspend == nil {
		spec.Suspend = ptr.To(false)
	}
	if spec.PodReplacementPolicy == nil {
		if spec.PodFailurePolicy != nil {
			spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
		} else {
			spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
		}
	}
	if spec.ManualSelector == nil {
		spec.ManualSelector = ptr.To(false)
	}
}

// SetDefaults_CronJob defaults a CronJob's spec: concurrencyPolicy Allow,
// suspend false, successfulJobsHistoryLimit 3, failedJobsHistoryLimit 1.
func SetDefaults_CronJob(obj *batchv1.CronJob) {
	spec := &obj.Spec
	if spec.ConcurrencyPolicy == "" {
		spec.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if spec.Suspend == nil {
		spec.Suspend = ptr.To(false)
	}
	if spec.SuccessfulJobsHistoryLimit == nil {
		spec.SuccessfulJobsHistoryLimit = ptr.To[int32](3)
	}
	if spec.FailedJobsHistoryLimit == nil {
		spec.FailedJobsHistoryLimit = ptr.To[int32](1)
	}
}

// SetDefaults_PodFailurePolicyOnPodConditionsPattern defaults a pod
// condition pattern's status to True.
func SetDefaults_PodFailurePolicyOnPodConditionsPattern(obj *batchv1.PodFailurePolicyOnPodConditionsPattern) {
	if obj.Status == "" {
		obj.Status = corev1.ConditionTrue
	}
}

// SetObjectDefaults_Job applies every default of a Job: its spec's, its
// pod failure policy patterns' and its pod template's.
func SetObjectDefaults_Job(in *batchv1.Job) {
	SetDefaults_Job(in)
	setObjectDefaultsJobSpec(&in.Spec)
}

// SetObjectDefaults_JobList defaults each Job of a list.
func SetObjectDefaults_JobList(in *batchv1.JobList) {
	for i := range in.Items {
		SetObjectDefaults_Job(&in.Items[i])
	}
}

// SetObjectDefaults_CronJob applies every default of a CronJob: its
// spec's, then those inside its job template (pod failure policy
// patterns, pod template), but not SetDefaults_Job's.
func SetObjectDefaults_CronJob(in *batchv1.CronJob) {
	SetDefaults_CronJob(in)
	setObjectDefaultsJobSpec(&in.Spec.JobTemplate.Spec)
}

// SetObjectDefaults_CronJobList defaults each CronJob of a list.
func SetObjectDefaults_CronJobList(in *batchv1.CronJobList) {
	for i := range in.Items {
		SetObjectDefaults_CronJob(&in.Items[i])
	}
}

// setObjectDefaultsJobSpec defaults what a job spec contains, in the order
// of upstream's generated defaulters: the pod failure policy's condition
// patterns, then the pod template.
func setObjectDefaultsJobSpec(spec *batchv1.JobSpec) {
	if spec.PodFailurePolicy != nil {
		for i := range spec.PodFailurePolicy.Rules {
			rule := &spec.PodFailurePolicy.Rules[i]
			for j := range rule.OnPodConditions {
				SetDefaults_PodFailurePolicyOnPodConditionsPattern(&rule.OnPodConditions[j])
			}
		}
	}
	defaultscorev1.SetObjectDefaults_PodTemplateSpec(&spec.Template)
}
