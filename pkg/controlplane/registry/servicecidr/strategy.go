package servicecidr

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

// strategy is the behaviour of servicecidrs: cluster-scoped, status kept by the main resource, updates without a resourceVersion allowed.
type strategy struct{}

// Strategy is the create and update strategy of servicecidrs.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy   = Strategy
	_ generic.UpdateStrategy   = Strategy
	_ rest.ResetFieldsStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return false }

// PrepareForCreate clears the status: it is written through /status.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*networkingv1.ServiceCIDR).Status = networkingv1.ServiceCIDRStatus{}
}

// PrepareForUpdate keeps the stored status.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*networkingv1.ServiceCIDR).Status = *old.(*networkingv1.ServiceCIDR).Status.DeepCopy()
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return networking.ValidateServiceCIDRFields(obj.(*networkingv1.ServiceCIDR))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return networking.ValidateServiceCIDRUpdateFields(obj.(*networkingv1.ServiceCIDR), old.(*networkingv1.ServiceCIDR))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
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

// StatusStrategy is the update strategy of servicecidrs/status: only the
// status changes, and only metadata is validated (upstream's
// ValidateServiceCIDRStatusUpdate does not validate the conditions: the
// default ServiceCIDR's Ready condition has no reason).
var StatusStrategy = generic.StatusStrategy{
	UpdateStrategy: Strategy,
	GroupVersions:  groupVersions,
}
