package storageclass

import (
	"context"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	storagevalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation/storage"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// strategy is the behaviour of storageclasses: cluster-scoped, updates without a resourceVersion allowed.
type strategy struct{}

// Strategy is the create and update strategy of storageclasses.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy = Strategy
	_ generic.UpdateStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return false }

func (strategy) PrepareForCreate(context.Context, runtime.Object)                 {}
func (strategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return storagevalidation.ValidateStorageClassFields(obj.(*storagev1.StorageClass))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return append(storagevalidation.ValidateStorageClassFields(obj.(*storagev1.StorageClass)), storagevalidation.ValidateStorageClassUpdateFields(obj.(*storagev1.StorageClass), old.(*storagev1.StorageClass))...)
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }
