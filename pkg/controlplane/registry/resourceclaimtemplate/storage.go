package resourceclaimtemplate

import (
	"context"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/resourceclaim"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation/resource"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// Resource is the resource served.
var Resource = resourcev1.Resource("resourceclaimtemplates")

// NewREST returns the store of resourceclaimtemplates.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, resourcev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &resourcev1.ResourceClaimTemplate{} },
		NewListFunc:               func() runtime.Object { return &resourcev1.ResourceClaimTemplateList{} },
		ReturnDeletedObject:       true, // as upstream: DELETE answers with the object
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: resourcev1.Resource("resourceclaimtemplate"),
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
}

type strategy struct{}

// Strategy is the create and update strategy of claim templates.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy = Strategy
	_ generic.UpdateStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate drops the fields of features that are off by default.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	resourceclaim.DropDisabledSpecFields(&obj.(*resourcev1.ResourceClaimTemplate).Spec.Spec, nil)
}

// PrepareForUpdate drops the fields of features that are off by default
// and that the stored template does not use.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	resourceclaim.DropDisabledSpecFields(&obj.(*resourcev1.ResourceClaimTemplate).Spec.Spec, &old.(*resourcev1.ResourceClaimTemplate).Spec.Spec)
}
func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return resource.ValidateResourceClaimTemplate(obj.(*resourcev1.ResourceClaimTemplate))
}
func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	t := obj.(*resourcev1.ResourceClaimTemplate)
	errs := resource.ValidateResourceClaimTemplate(t)
	return append(errs, resource.ValidateResourceClaimTemplateUpdate(t, old.(*resourcev1.ResourceClaimTemplate))...)
}
func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// TableConvertor renders templates as upstream's printResourceClaimTemplate
// (pkg/printers/internalversion/printers.go, v1.37): NAME AGE.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{table.NameColumn, table.AgeColumn},
	Row: func(obj runtime.Object) ([]any, bool) {
		t, ok := obj.(*resourcev1.ResourceClaimTemplate)
		if !ok {
			return nil, false
		}
		return []any{t.Name, table.Since(t.CreationTimestamp)}, true
	},
}
