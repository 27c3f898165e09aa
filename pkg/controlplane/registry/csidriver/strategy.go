package csidriver

import (
	"context"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	storagevalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation/storage"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// strategy is the behaviour of csidrivers: cluster-scoped, generation bumped on spec changes (but not set on create, as upstream's strategy), updates without a resourceVersion refused.
type strategy struct{ generic.SpecGeneration }

// NoGenerationOnCreate implements generic.NoGenerationOnCreate: upstream's
// CSIDriver strategy sets no generation on create; the first spec change
// makes it 1 (kube-apiserver v1.37.2).
func (strategy) NoGenerationOnCreate() {}

// Strategy is the create and update strategy of csidrivers.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy       = Strategy
	_ generic.UpdateStrategy       = Strategy
	_ generic.GenerationStrategy   = Strategy
	_ generic.NoGenerationOnCreate = Strategy
)

func (strategy) NamespaceScoped() bool { return false }

func (strategy) PrepareForCreate(context.Context, runtime.Object)                 {}
func (strategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return storagevalidation.ValidateCSIDriverFields(obj.(*storagev1.CSIDriver))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return storagevalidation.ValidateCSIDriverUpdateFields(obj.(*storagev1.CSIDriver), old.(*storagev1.CSIDriver))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return false }
