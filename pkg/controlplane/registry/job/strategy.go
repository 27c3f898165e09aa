package job

import (
	"context"
	"fmt"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	defaultscorev1 "github.com/kapi-dev/kapi/pkg/api/defaults/corev1"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation/batch"
	validationcore "github.com/kapi-dev/kapi/pkg/controlplane/validation/core"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage"
)

var groupVersions = []schema.GroupVersion{batchv1.SchemeGroupVersion}

// strategy is the main resource's behaviour.
type strategy struct{ generic.SpecGeneration }

// Strategy is the create, update and delete strategy of jobs.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy                  = Strategy
	_ generic.UpdateStrategy                  = Strategy
	_ generic.DeleteStrategy                  = Strategy
	_ generic.GarbageCollectionDeleteStrategy = Strategy
	_ generic.GenerationStrategy              = Strategy
	_ rest.ResetFieldsStrategy                = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate generates the selector and template labels (unless
// spec.manualSelector), clears the status and drops the fields of
// features that are off (spec.scheduling: WorkloadWithJob, alpha).
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	job := obj.(*batchv1.Job)
	if !ptr.Deref(job.Spec.ManualSelector, false) {
		generateSelector(job)
	}
	job.Status = batchv1.JobStatus{}
	job.Spec.Scheduling = nil
	defaultscorev1.DropDisabledTemplateFields(&job.Spec.Template, nil)
}

// generateSelector adds the job-name and controller-uid labels (legacy
// and batch.kubernetes.io/ ones) to the template unless the user set
// them (validation then reports a wrong value), and selects the
// batch.kubernetes.io/controller-uid label.
func generateSelector(job *batchv1.Job) {
	if job.Spec.Template.Labels == nil {
		job.Spec.Template.Labels = map[string]string{}
	}
	set := func(key, value string) {
		if _, ok := job.Spec.Template.Labels[key]; !ok {
			job.Spec.Template.Labels[key] = value
		}
	}
	set(batch.LegacyJobNameLabel, job.Name)
	set(batchv1.JobNameLabel, job.Name)
	set(batch.LegacyControllerUIDLabel, string(job.UID))
	set(batchv1.ControllerUidLabel, string(job.UID))
	if job.Spec.Selector == nil {
		job.Spec.Selector = &metav1.LabelSelector{}
	}
	if job.Spec.Selector.MatchLabels == nil {
		job.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, ok := job.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel]; !ok {
		job.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] = string(job.UID)
	}
}

// PrepareForUpdate keeps the stored status and drops disabled fields the
// stored Job does not use.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	job, oldJob := obj.(*batchv1.Job), old.(*batchv1.Job)
	job.Status = *oldJob.Status.DeepCopy()
	defaultscorev1.DropDisabledTemplateFields(&job.Spec.Template, &oldJob.Spec.Template)
	if oldJob.Spec.Scheduling == nil {
		job.Spec.Scheduling = nil
	}
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	job := obj.(*batchv1.Job)
	return batch.ValidateJobFields(job, validationOptions(job, nil))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	job, oldJob := obj.(*batchv1.Job), old.(*batchv1.Job)
	return batch.ValidateJobUpdateFields(job, oldJob, validationOptions(job, oldJob))
}

// validationOptions are upstream's: elastic Indexed Jobs allowed, the
// batch.kubernetes.io/ labels required unless the stored Job lacks them,
// invalid selector values kept if stored, scheduling directives mutable
// on a suspended Job that never started.
func validationOptions(job, old *batchv1.Job) batch.Options {
	opts := batch.Options{
		PodTemplate:             ValidatePodTemplate,
		AllowElasticIndexedJobs: true,
		RequirePrefixedLabels:   true,
	}
	if old != nil {
		opts.AllowInvalidLabelValueInSelector = metav1validation.LabelSelectorHasInvalidLabelValue(old.Spec.Selector)
		opts.AllowMutableSchedulingDirectives = ptr.Deref(old.Spec.Suspend, false) && old.Status.StartTime == nil
		_, hadName := old.Spec.Template.Labels[batchv1.JobNameLabel]
		_, hadUID := old.Spec.Template.Labels[batchv1.ControllerUidLabel]
		opts.RequirePrefixedLabels = hadName && hadUID
	}
	return opts
}

// ValidatePodTemplate is core's validation of the pod template of a Job
// (or of a CronJob's job template), with the options upstream derives
// from the template and the stored one.
func ValidatePodTemplate(template, old *corev1.PodTemplateSpec, fldPath *field.Path) field.ErrorList {
	return validationcore.ValidatePodTemplateSpec(template, fldPath, validationcore.ValidationOptionsForPodTemplate(template, old))
}

// WarningsOnCreate warns about a name that is not a DNS label (pod names
// and hostnames derive from it) and about the job spec.
func (strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	job := obj.(*batchv1.Job)
	var warnings []string
	if msgs := utilvalidation.IsDNS1123Label(job.Name); len(msgs) != 0 {
		warnings = append(warnings, fmt.Sprintf("metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: %v", msgs))
	}
	return append(warnings, WarningsForJobSpec(field.NewPath("spec"), &job.Spec)...)
}

// WarningsOnUpdate warns about the job spec when it changed.
func (strategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	job, oldJob := obj.(*batchv1.Job), old.(*batchv1.Job)
	if job.Generation == oldJob.Generation {
		return nil
	}
	return WarningsForJobSpec(field.NewPath("spec"), &job.Spec)
}

// Limits past which upstream warns that an Indexed Job's completed
// indexes may not be tracked.
const (
	completionsSoftLimit                        = 100_000
	parallelismSoftLimitForUnlimitedCompletions = 10_000
)

// WarningsForJobSpec is upstream's: a warning for Indexed Jobs with very
// many completions and a high parallelism, then the pod template's
// warnings (core's, at <path>.template).
func WarningsForJobSpec(path *field.Path, spec *batchv1.JobSpec) []string {
	var warnings []string
	if ptr.Deref(spec.CompletionMode, "") == batchv1.IndexedCompletion &&
		ptr.Deref(spec.Completions, 0) > completionsSoftLimit && ptr.Deref(spec.Parallelism, 0) > parallelismSoftLimitForUnlimitedCompletions {
		warnings = append(warnings, fmt.Sprintf("%s: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail", path))
	}
	template := &spec.Template
	return append(warnings, validationcore.PodSpecWarnings(&template.ObjectMeta, &template.Spec, path.Child("template"))...)
}

func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// CheckGracefulDelete implements generic.DeleteStrategy: Jobs are deleted
// at once.
func (strategy) CheckGracefulDelete(context.Context, runtime.Object, *metav1.DeleteOptions) bool {
	return false
}

// DefaultGarbageCollectionPolicy: through batch/v1 a Job's pods are
// orphaned unless the request says otherwise (upstream keeps this for
// compatibility; kubectl always sends a propagation policy).
func (strategy) DefaultGarbageCollectionPolicy(ctx context.Context) generic.GarbageCollectionPolicy {
	if info, ok := request.RequestInfoFrom(ctx); ok && info.APIGroup == batchv1.GroupName && info.APIVersion == "v1" {
		return generic.OrphanDependents
	}
	return generic.DeleteDependents
}

// GetResetFields: server-side apply to the main resource does not own
// status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// StatusStrategy is the update strategy of jobs/status: only the status
// changes, checked with upstream's status rules.
var StatusStrategy = generic.StatusStrategy{
	UpdateStrategy: Strategy,
	ValidateStatus: func(_ context.Context, obj, old runtime.Object) field.ErrorList {
		job, oldJob := obj.(*batchv1.Job), old.(*batchv1.Job)
		return batch.ValidateJobStatusUpdateFields(job, oldJob, batch.StatusOptionsFor(job, oldJob))
	},
	GroupVersions: groupVersions,
}

// FieldLabels are the fields Jobs can be selected by, besides
// metadata.name and metadata.namespace.
var FieldLabels = []string{"status.successful"}

// FieldLabelConversion accepts the field selector labels of batch/v1
// Jobs, for the scheme's AddFieldLabelConversionFunc, and refuses the
// others in the words of upstream's (pkg/apis/batch/v1/conversion.go,
// v1.37.2).
var FieldLabelConversion = generic.FieldLabelConversionRefusing(func(label string) error {
	return fmt.Errorf("field label %q not supported for Job", label)
}, "metadata.name", "metadata.namespace", "status.successful")

// GetAttrs returns a Job's labels and selectable fields.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	ls, fs, err := storage.DefaultAttrs(obj)
	if err != nil {
		return nil, nil, err
	}
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return nil, nil, fmt.Errorf("not a job: %T", obj)
	}
	fs["status.successful"] = strconv.Itoa(int(job.Status.Succeeded))
	return ls, fs, nil
}
