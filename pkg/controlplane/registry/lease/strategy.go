package lease

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// strategy is leases' behaviour: namespaced, created by PUT too (leader
// election clients do), and updates must name a resourceVersion (a lease
// is a lock).
type strategy struct{}

// Strategy is the create and update strategy of leases.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy = Strategy
	_ generic.UpdateStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate drops strategy and preferredHolder: the
// CoordinatedLeaderElection feature (alpha) is off in kube-apiserver
// v1.37, which stores a Lease created with them without them.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	l := obj.(*coordinationv1.Lease)
	l.Spec.Strategy = nil
	l.Spec.PreferredHolder = nil
}

// PrepareForUpdate drops them too unless the stored lease has them (as
// upstream with the feature off).
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	l, o := obj.(*coordinationv1.Lease), old.(*coordinationv1.Lease)
	if o.Spec.Strategy == nil {
		l.Spec.Strategy = nil
	}
	if o.Spec.PreferredHolder == nil {
		l.Spec.PreferredHolder = nil
	}
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateLeaseFields(obj.(*coordinationv1.Lease))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateLeaseUpdateFields(obj.(*coordinationv1.Lease), old.(*coordinationv1.Lease))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return true }
func (strategy) AllowUnconditionalUpdate() bool { return false }
