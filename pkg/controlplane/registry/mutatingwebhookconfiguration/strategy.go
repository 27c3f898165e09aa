package mutatingwebhookconfiguration

import (
	"context"

	arv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/admissionregistration"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// strategy: cluster-scoped, no status, generation bumped when the
// webhooks change.
type strategy struct{ generic.SpecGeneration }

// Strategy is the create and update strategy.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy     = Strategy
	_ generic.UpdateStrategy     = Strategy
	_ generic.GenerationStrategy = Strategy
)

func (strategy) NamespaceScoped() bool                                            { return false }
func (strategy) PrepareForCreate(context.Context, runtime.Object)                 {}
func (strategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return admissionregistration.ValidateMutatingWebhookConfiguration(obj.(*arv1.MutatingWebhookConfiguration))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return admissionregistration.ValidateMutatingWebhookConfigurationUpdate(obj.(*arv1.MutatingWebhookConfiguration), old.(*arv1.MutatingWebhookConfiguration))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }
