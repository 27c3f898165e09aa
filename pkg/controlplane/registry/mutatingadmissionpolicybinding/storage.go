package mutatingadmissionpolicybinding

import (
	"context"

	arv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/admissionregistration"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = arv1.Resource("mutatingadmissionpolicybindings")

// NewREST returns the mutatingadmissionpolicybindings resource.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, arv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &arv1.MutatingAdmissionPolicyBinding{} },
		NewListFunc:               func() runtime.Object { return &arv1.MutatingAdmissionPolicyBindingList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: arv1.Resource("mutatingadmissionpolicybinding"),
		ResourceCategories:        []string{"api-extensions"},
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
}

type strategy struct{ generic.SpecGeneration }

// Strategy is the create and update strategy of bindings.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy = Strategy
	_ generic.UpdateStrategy = Strategy
)

func (strategy) NamespaceScoped() bool                                            { return false }
func (strategy) PrepareForCreate(context.Context, runtime.Object)                 {}
func (strategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return admissionregistration.ValidateMutatingAdmissionPolicyBinding(obj.(*arv1.MutatingAdmissionPolicyBinding))
}

func (strategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return admissionregistration.ValidateMutatingAdmissionPolicyBinding(obj.(*arv1.MutatingAdmissionPolicyBinding))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }
