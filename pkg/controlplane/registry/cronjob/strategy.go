package cronjob

import (
	"context"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	defaultscorev1 "github.com/kapi-dev/kapi/pkg/api/defaults/corev1"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/job"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation/batch"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

var groupVersions = []schema.GroupVersion{batchv1.SchemeGroupVersion}

// strategy is the main resource's behaviour.
type strategy struct{ generic.SpecGeneration }

// Strategy is the create, update and delete strategy of cronjobs.
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

// PrepareForCreate clears the status and drops the job template's fields
// of features that are off.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	cj := obj.(*batchv1.CronJob)
	cj.Status = batchv1.CronJobStatus{}
	defaultscorev1.DropDisabledTemplateFields(&cj.Spec.JobTemplate.Spec.Template, nil)
	cj.Spec.JobTemplate.Spec.Scheduling = nil
}

// PrepareForUpdate keeps the stored status.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	cj, oldCJ := obj.(*batchv1.CronJob), old.(*batchv1.CronJob)
	cj.Status = *oldCJ.Status.DeepCopy()
	defaultscorev1.DropDisabledTemplateFields(&cj.Spec.JobTemplate.Spec.Template, &oldCJ.Spec.JobTemplate.Spec.Template)
	if oldCJ.Spec.JobTemplate.Spec.Scheduling == nil {
		cj.Spec.JobTemplate.Spec.Scheduling = nil
	}
}

// options: the job template's pod template is validated as a Job's.
func options() batch.Options {
	return batch.Options{PodTemplate: job.ValidatePodTemplate}
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return batch.ValidateCronJobFields(obj.(*batchv1.CronJob), options())
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return batch.ValidateCronJobUpdateFields(obj.(*batchv1.CronJob), old.(*batchv1.CronJob), options())
}

// WarningsOnCreate warns about a name that is not a DNS label and about
// the job template's spec.
func (strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	cj := obj.(*batchv1.CronJob)
	var warnings []string
	if msgs := utilvalidation.IsDNS1123Label(cj.Name); len(msgs) != 0 {
		warnings = append(warnings, fmt.Sprintf("metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: %v", msgs))
	}
	return append(warnings, job.WarningsForJobSpec(field.NewPath("spec", "jobTemplate", "spec"), &cj.Spec.JobTemplate.Spec)...)
}

// WarningsOnUpdate warns about the job template when the spec changed
// and, as upstream, about a TZ in the schedule (whose path upstream
// spells spec.spec.schedule).
func (strategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	cj, oldCJ := obj.(*batchv1.CronJob), old.(*batchv1.CronJob)
	var warnings []string
	if cj.Generation != oldCJ.Generation {
		warnings = job.WarningsForJobSpec(field.NewPath("spec", "jobTemplate", "spec"), &cj.Spec.JobTemplate.Spec)
	}
	if strings.Contains(cj.Spec.Schedule, "TZ") {
		warnings = append(warnings, fmt.Sprintf("cannot use TZ or CRON_TZ in %s, use timeZone instead, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details",
			field.NewPath("spec", "spec", "schedule")))
	}
	return warnings
}

func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// CheckGracefulDelete implements generic.DeleteStrategy: CronJobs are
// deleted at once.
func (strategy) CheckGracefulDelete(context.Context, runtime.Object, *metav1.DeleteOptions) bool {
	return false
}

// DefaultGarbageCollectionPolicy: a CronJob's Jobs are deleted with it
// (batch/v1; only the removed batch/v1beta1 orphaned them).
func (strategy) DefaultGarbageCollectionPolicy(context.Context) generic.GarbageCollectionPolicy {
	return generic.DeleteDependents
}

// GetResetFields: server-side apply to the main resource does not own
// status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// StatusStrategy is the update strategy of cronjobs/status: only the
// status changes, unvalidated (as upstream).
var StatusStrategy = generic.StatusStrategy{
	UpdateStrategy: Strategy,
	GroupVersions:  groupVersions,
}
