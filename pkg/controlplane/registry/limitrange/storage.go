package limitrange

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/core"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = corev1.Resource("limitranges")

// NewREST returns the completed store of core/v1 limitranges, on the
// storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, corev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &corev1.LimitRange{} },
		NewListFunc:               func() runtime.Object { return &corev1.LimitRangeList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: corev1.Resource("limitrange"),
		ResourceShortNames:        []string{"limits"},
		NameValidator:             core.ValidateLimitRangeName,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
	})
}

// strategy is upstream's limitrangeStrategy: namespaced, created by PUT
// too, unconditional updates allowed, no status.
type strategy struct{}

// Strategy is the create and update strategy of limitranges.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy = Strategy
	_ generic.UpdateStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate names a limit range created without a name (nor
// generateName) with a UUID, as upstream.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	lr := obj.(*corev1.LimitRange)
	if lr.Name == "" {
		lr.Name = string(uuid.NewUUID())
	}
}

func (strategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return core.ValidateLimitRangeFields(obj.(*corev1.LimitRange))
}

// ValidateUpdate validates the new limit range as a new one (upstream has
// no update-specific rule besides metadata's).
func (strategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return core.ValidateLimitRangeFields(obj.(*corev1.LimitRange))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return true }
func (strategy) AllowUnconditionalUpdate() bool { return true }
