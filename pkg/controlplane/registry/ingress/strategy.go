package ingress

import (
	"context"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/networking"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

var groupVersions = []schema.GroupVersion{networkingv1.SchemeGroupVersion}

// strategy is the behaviour of ingresses: namespaced, generation bumped on spec changes, status kept by the main resource, updates without a resourceVersion allowed.
type strategy struct{ generic.SpecGeneration }

// Strategy is the create and update strategy of ingresses.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy     = Strategy
	_ generic.UpdateStrategy     = Strategy
	_ generic.GenerationStrategy = Strategy
	_ rest.ResetFieldsStrategy   = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate clears the status: it is written through /status.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*networkingv1.Ingress).Status = networkingv1.IngressStatus{}
}

// PrepareForUpdate keeps the stored status.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*networkingv1.Ingress).Status = *old.(*networkingv1.Ingress).Status.DeepCopy()
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return networking.ValidateIngressCreateFields(obj.(*networkingv1.Ingress))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return networking.ValidateIngressUpdateFields(obj.(*networkingv1.Ingress), old.(*networkingv1.Ingress))
}

func (strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return networking.IngressWarnings(obj.(*networkingv1.Ingress))
}

// WarningsOnUpdate: none (upstream warns about the deprecated class
// annotation on create only).
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// GetResetFields: server-side apply to the main resource does not own
// status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// StatusStrategy is the update strategy of ingresses/status: only the
// status changes.
var StatusStrategy = generic.StatusStrategy{
	UpdateStrategy: Strategy,
	ValidateStatus: func(_ context.Context, obj, old runtime.Object) field.ErrorList {
		return networking.ValidateIngressStatusUpdateFields(obj.(*networkingv1.Ingress), old.(*networkingv1.Ingress))
	},
	GroupVersions: groupVersions,
}
