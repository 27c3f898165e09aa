package horizontalpodautoscaler

import (
	"context"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation/autoscaling"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// groupVersions are the versions the objects are served in.
var groupVersions = []schema.GroupVersion{autoscalingv1.SchemeGroupVersion, autoscalingv2.SchemeGroupVersion}

// strategy is the main resource's behaviour. The generation bumps on spec
// changes (status.observedGeneration follows it).
type strategy struct{ generic.SpecGeneration }

// Strategy is the create and update strategy of autoscalers.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy     = Strategy
	_ generic.UpdateStrategy     = Strategy
	_ generic.GenerationStrategy = Strategy
	_ rest.ResetFieldsStrategy   = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate clears the status.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*autoscalingv2.HorizontalPodAutoscaler).Status = autoscalingv2.HorizontalPodAutoscalerStatus{}
}

// PrepareForUpdate keeps the stored status.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*autoscalingv2.HorizontalPodAutoscaler).Status = *old.(*autoscalingv2.HorizontalPodAutoscaler).Status.DeepCopy()
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	hpa := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	return autoscaling.ValidateHorizontalPodAutoscalerFields(hpa, autoscaling.OptionsFor(hpa, nil))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	hpa, oldHPA := obj.(*autoscalingv2.HorizontalPodAutoscaler), old.(*autoscalingv2.HorizontalPodAutoscaler)
	return autoscaling.ValidateHorizontalPodAutoscalerFields(hpa, autoscaling.OptionsFor(hpa, oldHPA))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// GetResetFields: server-side apply to the main resource, in either
// version, does not own status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// StatusStrategy is the update strategy of horizontalpodautoscalers/status:
// only the status changes; replica counts are not negative.
var StatusStrategy = generic.StatusStrategy{
	UpdateStrategy: Strategy,
	ValidateStatus: func(_ context.Context, obj, old runtime.Object) field.ErrorList {
		hpa := obj.(*autoscalingv2.HorizontalPodAutoscaler)
		allErrs := validation.ValidateKubeFinalizerNames(hpa.Finalizers, field.NewPath("metadata", "finalizers"))
		return append(allErrs, autoscaling.ValidateHorizontalPodAutoscalerStatusFields(hpa)...)
	},
	GroupVersions: groupVersions,
}
