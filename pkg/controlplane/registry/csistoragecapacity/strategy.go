package csistoragecapacity

import (
	"context"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	storagevalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation/storage"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// strategy is the behaviour of csistoragecapacities: namespaced, updates without a resourceVersion refused.
type strategy struct{}

// Strategy is the create and update strategy of csistoragecapacities.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy = Strategy
	_ generic.UpdateStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

func (strategy) PrepareForCreate(context.Context, runtime.Object)                 {}
func (strategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return storagevalidation.ValidateCSIStorageCapacityFields(obj.(*storagev1.CSIStorageCapacity), storagevalidation.CSIStorageCapacityOptions{})
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return storagevalidation.ValidateCSIStorageCapacityUpdateFields(obj.(*storagev1.CSIStorageCapacity), old.(*storagev1.CSIStorageCapacity))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return false }
