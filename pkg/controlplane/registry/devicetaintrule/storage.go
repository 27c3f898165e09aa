package devicetaintrule

import (
	"context"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/resource"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// Resource is the resource served.
var Resource = resourcev1.Resource("devicetaintrules")

var groupVersions = []schema.GroupVersion{resourcev1.SchemeGroupVersion}

// NewREST returns the store of devicetaintrules and its status
// subresource.
func NewREST(opts generic.RESTOptions) (*generic.Store, *generic.StatusREST, error) {
	store, err := generic.NewStore(opts, resourcev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &resourcev1.DeviceTaintRule{} },
		NewListFunc:               func() runtime.Object { return &resourcev1.DeviceTaintRuleList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: resourcev1.Resource("devicetaintrule"),
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
	if err != nil {
		return nil, nil, err
	}
	return store, generic.NewStatusREST(store, StatusStrategy), nil
}

type strategy struct{ generic.SpecGeneration }

// Strategy is the create and update strategy of rules.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy     = Strategy
	_ generic.UpdateStrategy     = Strategy
	_ generic.GenerationStrategy = Strategy
	_ rest.ResetFieldsStrategy   = Strategy
)

func (strategy) NamespaceScoped() bool { return false }

// PrepareForCreate clears the status.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*resourcev1.DeviceTaintRule).Status = resourcev1.DeviceTaintRuleStatus{}
}

// PrepareForUpdate keeps the stored status.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*resourcev1.DeviceTaintRule).Status = *old.(*resourcev1.DeviceTaintRule).Status.DeepCopy()
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return resource.ValidateDeviceTaintRule(obj.(*resourcev1.DeviceTaintRule))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return resource.ValidateDeviceTaintRuleUpdate(obj.(*resourcev1.DeviceTaintRule), old.(*resourcev1.DeviceTaintRule))
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

// StatusStrategy is the update strategy of devicetaintrules/status.
var StatusStrategy = generic.StatusStrategy{
	UpdateStrategy: Strategy,
	ValidateStatus: func(_ context.Context, obj, old runtime.Object) field.ErrorList {
		return resource.ValidateDeviceTaintRuleStatusUpdate(obj.(*resourcev1.DeviceTaintRule), old.(*resourcev1.DeviceTaintRule))
	},
	GroupVersions: groupVersions,
}
