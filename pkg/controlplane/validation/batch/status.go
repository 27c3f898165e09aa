package batch

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
)

// StatusOptions are the checks of a Job status update (upstream's
// JobStatusValidationOptions). [StatusOptionsFor] sets them as upstream's
// strategy does with JobManagedBy enabled (its default since v1.32).
type StatusOptions struct {
	RejectDecreasingSucceededCounter             bool
	RejectDecreasingFailedCounter                bool
	RejectDisablingTerminalCondition             bool
	RejectInvalidCompletedIndexes                bool
	RejectInvalidFailedIndexes                   bool
	RejectFailedIndexesOverlappingCompleted      bool
	RejectCompletedIndexesForNonIndexedJob       bool
	RejectFailedIndexesForNoBackoffLimitPerIndex bool
	RejectFailedJobWithoutFailureTarget          bool
	RejectCompleteJobWithoutSuccessCriteriaMet   bool
	RejectFinishedJobWithActivePods              bool
	RejectFinishedJobWithoutStartTime            bool
	RejectFinishedJobWithUncountedTerminatedPods bool
	RejectStartTimeUpdateForUnsuspendedJob       bool
	RejectCompletionTimeBeforeStartTime          bool
	RejectMutatingCompletionTime                 bool
	RejectCompleteJobWithoutCompletionTime       bool
	RejectNotCompleteJobWithCompletionTime       bool
	RejectCompleteJobWithFailedCondition         bool
	RejectCompleteJobWithFailureTargetCondition  bool
	AllowForSuccessCriteriaMetInExtendedScope    bool
	RejectMoreReadyThanActivePods                bool
	RejectFinishedJobWithTerminatingPods         bool
}

// StatusOptionsFor returns the checks of a status update from old to job:
// most rules apply only when the fields they read change, so that a
// controller can keep updating a Job whose status already breaks one.
func StatusOptionsFor(job, old *batchv1.Job) StatusOptions {
	indexed := ptr.Deref(job.Spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion
	finishedChanged := IsJobFinished(old) != IsJobFinished(job)
	completeChanged := IsJobComplete(old) != IsJobComplete(job)
	failedChanged := IsJobFailed(old) != IsJobFailed(job)
	failureTargetChanged := IsConditionTrue(old.Status.Conditions, batchv1.JobFailureTarget) != IsConditionTrue(job.Status.Conditions, batchv1.JobFailureTarget)
	successCriteriaMetChanged := IsConditionTrue(old.Status.Conditions, batchv1.JobSuccessCriteriaMet) != IsConditionTrue(job.Status.Conditions, batchv1.JobSuccessCriteriaMet)
	completedIndexesChanged := old.Status.CompletedIndexes != job.Status.CompletedIndexes
	failedIndexesChanged := !ptr.Equal(old.Status.FailedIndexes, job.Status.FailedIndexes)
	activeChanged := old.Status.Active != job.Status.Active
	readyChanged := !ptr.Equal(old.Status.Ready, job.Status.Ready)
	terminatingChanged := !ptr.Equal(old.Status.Terminating, job.Status.Terminating)
	startTimeChanged := !timeEqual(old.Status.StartTime, job.Status.StartTime)
	completionTimeChanged := !timeEqual(old.Status.CompletionTime, job.Status.CompletionTime)
	uncountedChanged := !uncountedEqual(old.Status.UncountedTerminatedPods, job.Status.UncountedTerminatedPods)
	return StatusOptions{
		// A succeeded count may go down when an Indexed Job whose
		// completions equal its parallelism is scaled down.
		RejectDecreasingSucceededCounter:             !indexed || !ptr.Equal(job.Spec.Completions, job.Spec.Parallelism),
		RejectDecreasingFailedCounter:                true,
		RejectDisablingTerminalCondition:             true,
		RejectInvalidCompletedIndexes:                completedIndexesChanged,
		RejectInvalidFailedIndexes:                   failedIndexesChanged,
		RejectCompletedIndexesForNonIndexedJob:       completedIndexesChanged,
		RejectFailedIndexesForNoBackoffLimitPerIndex: failedIndexesChanged,
		RejectFailedIndexesOverlappingCompleted:      failedIndexesChanged || completedIndexesChanged,
		RejectFailedJobWithoutFailureTarget:          failedChanged || failureTargetChanged,
		RejectCompleteJobWithoutSuccessCriteriaMet:   completeChanged || successCriteriaMetChanged,
		RejectFinishedJobWithActivePods:              finishedChanged || activeChanged,
		RejectFinishedJobWithoutStartTime:            finishedChanged || startTimeChanged,
		RejectFinishedJobWithUncountedTerminatedPods: finishedChanged || uncountedChanged,
		RejectStartTimeUpdateForUnsuspendedJob:       startTimeChanged,
		RejectCompletionTimeBeforeStartTime:          startTimeChanged || completionTimeChanged,
		RejectMutatingCompletionTime:                 true,
		RejectNotCompleteJobWithCompletionTime:       completeChanged || completionTimeChanged,
		RejectCompleteJobWithoutCompletionTime:       completeChanged || completionTimeChanged,
		RejectCompleteJobWithFailedCondition:         completeChanged || failedChanged,
		RejectCompleteJobWithFailureTargetCondition:  completeChanged || failureTargetChanged,
		AllowForSuccessCriteriaMetInExtendedScope:    true,
		RejectMoreReadyThanActivePods:                readyChanged || activeChanged,
		RejectFinishedJobWithTerminatingPods:         finishedChanged || terminatingChanged,
	}
}

// ValidateJobStatusUpdate checks a status update of a Job, its metadata
// included.
func ValidateJobStatusUpdate(job, old *batchv1.Job, opts StatusOptions) field.ErrorList {
	allErrs := validation.ValidateObjectMetaUpdate(&job.ObjectMeta, &old.ObjectMeta, metadataPath)
	return append(allErrs, ValidateJobStatusUpdateFields(job, old, opts)...)
}

// ValidateJobStatusUpdateFields checks a status update of a Job but for
// the generic metadata rules.
func ValidateJobStatusUpdateFields(job, old *batchv1.Job, opts StatusOptions) field.ErrorList {
	statusPath := field.NewPath("status")
	allErrs := validateJobStatus(job, statusPath, opts)
	cond := statusPath.Child("conditions")
	if opts.RejectDisablingTerminalCondition {
		for _, t := range []batchv1.JobConditionType{batchv1.JobFailed, batchv1.JobComplete, batchv1.JobFailureTarget} {
			if IsConditionTrue(old.Status.Conditions, t) && !IsConditionTrue(job.Status.Conditions, t) {
				allErrs = append(allErrs, field.Invalid(cond, field.OmitValueType{}, fmt.Sprintf("cannot disable the terminal %s=True condition", t)))
			}
		}
	}
	if opts.RejectDecreasingFailedCounter && job.Status.Failed < old.Status.Failed {
		allErrs = append(allErrs, field.Invalid(statusPath.Child("failed"), job.Status.Failed, "cannot decrease the failed counter"))
	}
	if opts.RejectDecreasingSucceededCounter && job.Status.Succeeded < old.Status.Succeeded {
		allErrs = append(allErrs, field.Invalid(statusPath.Child("succeeded"), job.Status.Succeeded, "cannot decrease the succeeded counter"))
	}
	if opts.RejectMutatingCompletionTime && job.Status.CompletionTime != nil && old.Status.CompletionTime != nil &&
		!timeEqual(job.Status.CompletionTime, old.Status.CompletionTime) {
		allErrs = append(allErrs, field.Invalid(statusPath.Child("completionTime"), job.Status.CompletionTime, "completionTime cannot be mutated"))
	}
	if opts.RejectStartTimeUpdateForUnsuspendedJob && old.Status.StartTime != nil &&
		!timeEqual(old.Status.StartTime, job.Status.StartTime) && !ptr.Deref(job.Spec.Suspend, false) {
		allErrs = append(allErrs, field.Required(statusPath.Child("startTime"), "startTime cannot be removed for unsuspended job"))
	}
	met, oldMet := IsConditionTrue(job.Status.Conditions, batchv1.JobSuccessCriteriaMet), IsConditionTrue(old.Status.Conditions, batchv1.JobSuccessCriteriaMet)
	if oldMet && !met {
		allErrs = append(allErrs, field.Invalid(cond, field.OmitValueType{}, "cannot disable the SuccessCriteriaMet=True condition"))
	}
	if IsJobComplete(old) && !oldMet && met {
		allErrs = append(allErrs, field.Invalid(cond, field.OmitValueType{}, "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions"))
	}
	return allErrs
}

func validateJobStatus(job *batchv1.Job, fldPath *field.Path, opts StatusOptions) field.ErrorList {
	var allErrs field.ErrorList
	status := &job.Status
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(status.Active), fldPath.Child("active"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(status.Succeeded), fldPath.Child("succeeded"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(status.Failed), fldPath.Child("failed"))...)
	if status.Ready != nil {
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(*status.Ready), fldPath.Child("ready"))...)
	}
	if status.Terminating != nil {
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(*status.Terminating), fldPath.Child("terminating"))...)
	}
	if u := status.UncountedTerminatedPods; u != nil {
		p := fldPath.Child("uncountedTerminatedPods")
		seen := sets.New[types.UID]()
		check := func(list []types.UID, lp *field.Path) {
			for i, uid := range list {
				switch {
				case uid == "":
					allErrs = append(allErrs, field.Invalid(lp.Index(i), uid, "must not be empty"))
				case seen.Has(uid):
					allErrs = append(allErrs, field.Duplicate(lp.Index(i), uid))
				default:
					seen.Insert(uid)
				}
			}
		}
		check(u.Succeeded, p.Child("succeeded"))
		check(u.Failed, p.Child("failed"))
	}
	cond := fldPath.Child("conditions")
	complete, failed := IsJobComplete(job), IsJobFailed(job)
	failureTarget := IsConditionTrue(status.Conditions, batchv1.JobFailureTarget)
	successCriteriaMet := IsConditionTrue(status.Conditions, batchv1.JobSuccessCriteriaMet)
	if opts.RejectCompleteJobWithFailedCondition && complete && failed {
		allErrs = append(allErrs, field.Invalid(cond, field.OmitValueType{}, "cannot set Complete=True and Failed=true conditions"))
	}
	if opts.RejectCompleteJobWithFailureTargetCondition && complete && failureTarget {
		allErrs = append(allErrs, field.Invalid(cond, field.OmitValueType{}, "cannot set Complete=True and FailureTarget=true conditions"))
	}
	if opts.RejectNotCompleteJobWithCompletionTime && status.CompletionTime != nil && !complete {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("completionTime"), status.CompletionTime, "cannot set completionTime when there is no Complete=True condition"))
	}
	if opts.RejectCompleteJobWithoutCompletionTime && status.CompletionTime == nil && complete {
		allErrs = append(allErrs, field.Required(fldPath.Child("completionTime"), "completionTime is required for Complete jobs"))
	}
	if opts.RejectCompletionTimeBeforeStartTime && status.StartTime != nil && status.CompletionTime != nil && status.CompletionTime.Before(status.StartTime) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("completionTime"), status.CompletionTime, "completionTime cannot be set before startTime"))
	}
	if opts.RejectFailedJobWithoutFailureTarget && failed && !failureTarget {
		allErrs = append(allErrs, field.Invalid(cond, field.OmitValueType{}, "cannot set Failed=True condition without the FailureTarget=true condition"))
	}
	if opts.RejectCompleteJobWithoutSuccessCriteriaMet && complete && !successCriteriaMet {
		allErrs = append(allErrs, field.Invalid(cond, field.OmitValueType{}, "cannot set Complete=True condition without the SuccessCriteriaMet=true condition"))
	}
	finished := IsJobFinished(job)
	if opts.RejectFinishedJobWithActivePods && status.Active > 0 && finished {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("active"), status.Active, "active>0 is invalid for finished job"))
	}
	if opts.RejectFinishedJobWithoutStartTime && status.StartTime == nil && finished {
		allErrs = append(allErrs, field.Required(fldPath.Child("startTime"), "startTime is required for finished job"))
	}
	if opts.RejectFinishedJobWithUncountedTerminatedPods && finished && status.UncountedTerminatedPods != nil &&
		len(status.UncountedTerminatedPods.Failed)+len(status.UncountedTerminatedPods.Succeeded) > 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("uncountedTerminatedPods"), status.UncountedTerminatedPods, "uncountedTerminatedPods needs to be empty for finished job"))
	}
	if opts.RejectInvalidCompletedIndexes && job.Spec.Completions != nil {
		if _, err := validateIndexesFormat(status.CompletedIndexes, *job.Spec.Completions); err != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("completedIndexes"), status.CompletedIndexes, fmt.Sprintf("error parsing completedIndexes: %s", err)))
		}
	}
	if opts.RejectInvalidFailedIndexes && job.Spec.Completions != nil && job.Spec.BackoffLimitPerIndex != nil && status.FailedIndexes != nil {
		if _, err := validateIndexesFormat(*status.FailedIndexes, *job.Spec.Completions); err != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("failedIndexes"), status.FailedIndexes, fmt.Sprintf("error parsing failedIndexes: %s", err)))
		}
	}
	indexed := ptr.Deref(job.Spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion
	if opts.RejectCompletedIndexesForNonIndexedJob && status.CompletedIndexes != "" && !indexed {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("completedIndexes"), status.CompletedIndexes, "cannot set non-empty completedIndexes when non-indexed completion mode"))
	}
	if opts.RejectFailedIndexesForNoBackoffLimitPerIndex && job.Spec.BackoffLimitPerIndex == nil && status.FailedIndexes != nil {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("failedIndexes"), *status.FailedIndexes, "cannot set non-null failedIndexes when backoffLimitPerIndex is null"))
	}
	if opts.RejectFailedIndexesOverlappingCompleted && job.Spec.Completions != nil && status.FailedIndexes != nil {
		if err := validateFailedIndexesNotOverlapCompleted(status.CompletedIndexes, *status.FailedIndexes, *job.Spec.Completions); err != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("failedIndexes"), *status.FailedIndexes, err.Error()))
		}
	}
	if opts.RejectFinishedJobWithTerminatingPods && status.Terminating != nil && *status.Terminating > 0 && finished {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("terminating"), status.Terminating, "terminating>0 is invalid for finished job"))
	}
	if opts.RejectMoreReadyThanActivePods && status.Ready != nil && *status.Ready > status.Active {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("ready"), *status.Ready, "cannot set more ready pods than active"))
	}
	if !opts.AllowForSuccessCriteriaMetInExtendedScope && !indexed && successCriteriaMet {
		allErrs = append(allErrs, field.Invalid(cond, field.OmitValueType{}, "cannot set SuccessCriteriaMet to NonIndexed Job"))
	}
	if successCriteriaMet && failed {
		allErrs = append(allErrs, field.Invalid(cond, field.OmitValueType{}, "cannot set SuccessCriteriaMet=True and Failed=true conditions"))
	}
	if successCriteriaMet && failureTarget {
		allErrs = append(allErrs, field.Invalid(cond, field.OmitValueType{}, "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions"))
	}
	if !opts.AllowForSuccessCriteriaMetInExtendedScope && job.Spec.SuccessPolicy == nil && successCriteriaMet {
		allErrs = append(allErrs, field.Invalid(cond, field.OmitValueType{}, "cannot set SuccessCriteriaMet=True for Job without SuccessPolicy"))
	}
	if job.Spec.SuccessPolicy != nil && !successCriteriaMet && complete {
		allErrs = append(allErrs, field.Invalid(cond, field.OmitValueType{}, "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True"))
	}
	return allErrs
}

// IsJobFinished reports a Complete=True or Failed=True condition.
func IsJobFinished(job *batchv1.Job) bool {
	return IsJobComplete(job) || IsJobFailed(job)
}

// IsJobComplete reports a Complete=True condition.
func IsJobComplete(job *batchv1.Job) bool {
	return IsConditionTrue(job.Status.Conditions, batchv1.JobComplete)
}

// IsJobFailed reports a Failed=True condition.
func IsJobFailed(job *batchv1.Job) bool {
	return IsConditionTrue(job.Status.Conditions, batchv1.JobFailed)
}

// IsConditionTrue reports whether list has a condition of type t with
// status True.
func IsConditionTrue(list []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	for _, c := range list {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// timeEqual compares two optional times to the second, as they are
// serialized.
func timeEqual(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(b)
}

func uncountedEqual(a, b *batchv1.UncountedTerminatedPods) bool {
	return equality.Semantic.DeepEqual(a, b)
}
