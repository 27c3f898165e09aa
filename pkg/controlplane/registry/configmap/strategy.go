package configmap

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// strategy is configmaps' behaviour: namespaced, no status, no
// create-on-update, unconditional updates allowed.
type strategy struct{}

// Strategy is the create and update strategy of configmaps.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy = Strategy
	_ generic.UpdateStrategy = Strategy
)

func (strategy) NamespaceScoped() bool                            { return true }
func (strategy) PrepareForCreate(context.Context, runtime.Object) {}
func (strategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateConfigMapFields(obj.(*corev1.ConfigMap))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateConfigMapUpdateFields(obj.(*corev1.ConfigMap), old.(*corev1.ConfigMap))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }
