package priorityclass

import (
	"context"

	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/scheduling"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// strategy is the behaviour of priorityclasses: cluster-scoped, generation
// 1 from create on (upstream's strategy sets it and never bumps it),
// updates without a resourceVersion allowed.
type strategy struct{ generic.FixedGeneration }

// Strategy is the create and update strategy of priorityclasses.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy     = Strategy
	_ generic.UpdateStrategy     = Strategy
	_ generic.GenerationStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return false }

func (strategy) PrepareForCreate(context.Context, runtime.Object)                 {}
func (strategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return scheduling.ValidatePriorityClassFields(obj.(*schedulingv1.PriorityClass))
}

// ValidateUpdate checks only what may not change (value,
// preemptionPolicy), as upstream's strategy: the create-time rules (the
// reserved "system-" names) are not checked again.
func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return scheduling.ValidatePriorityClassUpdateFields(obj.(*schedulingv1.PriorityClass), old.(*schedulingv1.PriorityClass))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }
