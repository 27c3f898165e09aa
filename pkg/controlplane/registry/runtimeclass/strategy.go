package runtimeclass

import (
	"context"

	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	nodevalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation/node"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// strategy is the behaviour of runtimeclasses: cluster-scoped, updates without a resourceVersion refused.
type strategy struct{}

// Strategy is the create and update strategy of runtimeclasses.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy = Strategy
	_ generic.UpdateStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return false }

func (strategy) PrepareForCreate(context.Context, runtime.Object)                 {}
func (strategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return nodevalidation.ValidateRuntimeClassFields(obj.(*nodev1.RuntimeClass))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return append(nodevalidation.ValidateRuntimeClassFields(obj.(*nodev1.RuntimeClass)), nodevalidation.ValidateRuntimeClassUpdateFields(obj.(*nodev1.RuntimeClass), old.(*nodev1.RuntimeClass))...)
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return false }
