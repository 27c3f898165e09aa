package statefulset

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	defaultscorev1 "github.com/kapi-dev/kapi/pkg/api/defaults/corev1"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/workload"
	appsvalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation/apps"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

var groupVersions = []schema.GroupVersion{appsv1.SchemeGroupVersion}

// negativeHistoryWarning is upstream's warning for a negative
// revisionHistoryLimit.
const negativeHistoryWarning = "spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended"

// strategy is the main resource's behaviour: namespaced, status kept from
// the stored object, generation bumped on spec changes, no
// create-on-update, unconditional updates allowed.
type strategy struct{ generic.SpecGeneration }

// Strategy is the create and update strategy of statefulsets.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy     = Strategy
	_ generic.UpdateStrategy     = Strategy
	_ generic.GenerationStrategy = Strategy
	_ rest.ResetFieldsStrategy   = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate clears the status: a create cannot set it.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	o := obj.(*appsv1.StatefulSet)
	o.Status = appsv1.StatefulSetStatus{}
	defaultscorev1.DropDisabledTemplateFields(&o.Spec.Template, nil)
}

// PrepareForUpdate keeps the stored status: only /status changes it.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	o, oldO := obj.(*appsv1.StatefulSet), old.(*appsv1.StatefulSet)
	o.Status = *oldO.Status.DeepCopy()
	defaultscorev1.DropDisabledTemplateFields(&o.Spec.Template, &oldO.Spec.Template)
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	ss := obj.(*appsv1.StatefulSet)
	return appsvalidation.ValidateStatefulSetFields(ss, workload.TemplateValidationOptions(&ss.Spec.Template, nil))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	ss, o := obj.(*appsv1.StatefulSet), old.(*appsv1.StatefulSet)
	return appsvalidation.ValidateStatefulSetUpdateFields(ss, o, workload.TemplateValidationOptions(&ss.Spec.Template, &o.Spec.Template))
}

// WarningsOnCreate warns about the pod template, the claim templates and a
// negative revisionHistoryLimit.
func (strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	ss := obj.(*appsv1.StatefulSet)
	warnings := workload.TemplateWarnings(&ss.Spec.Template)
	warnings = append(warnings, workload.ClaimTemplateWarnings(ss.Spec.VolumeClaimTemplates, false)...)
	if l := ss.Spec.RevisionHistoryLimit; l != nil && *l < 0 {
		warnings = append(warnings, negativeHistoryWarning)
	}
	return warnings
}

// WarningsOnUpdate warns about the pod template when the generation moved,
// about the claim templates and a negative revisionHistoryLimit.
func (strategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	ss := obj.(*appsv1.StatefulSet)
	var warnings []string
	if ss.Generation != old.(*appsv1.StatefulSet).Generation {
		warnings = workload.TemplateWarnings(&ss.Spec.Template)
	}
	warnings = append(warnings, workload.ClaimTemplateWarnings(ss.Spec.VolumeClaimTemplates, true)...)
	if l := ss.Spec.RevisionHistoryLimit; l != nil && *l < 0 {
		warnings = append(warnings, negativeHistoryWarning)
	}
	return warnings
}

func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// GetResetFields: server-side apply to the main resource does not own
// status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// statusStrategy is the /status subresource's: the spec is kept from the
// stored object; the status and the metadata change.
type statusStrategy struct{ strategy }

// StatusStrategy is the update strategy of statefulsets/status.
var StatusStrategy = statusStrategy{Strategy}

var _ generic.UpdateStrategy = StatusStrategy

func (statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*appsv1.StatefulSet).Spec = *old.(*appsv1.StatefulSet).Spec.DeepCopy()
}

func (statusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return appsvalidation.ValidateStatefulSetStatusUpdateFields(obj.(*appsv1.StatefulSet), old.(*appsv1.StatefulSet))
}

func (statusStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// GetResetFields: server-side apply to /status does not own the spec.
func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"spec"})
}
