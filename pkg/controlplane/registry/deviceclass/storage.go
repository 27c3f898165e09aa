package deviceclass

import (
	"context"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/declarative"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation/resource"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// Resource is the resource served.
var Resource = resourcev1.Resource("deviceclasses")

// NewREST returns the store of deviceclasses.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, resourcev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &resourcev1.DeviceClass{} },
		NewListFunc:               func() runtime.Object { return &resourcev1.DeviceClassList{} },
		ReturnDeletedObject:       true, // as upstream: DELETE answers with the object
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: resourcev1.Resource("deviceclass"),
		// +k8s:subfield(name)=+k8s:format=k8s-long-name, beta
		// (k8s.io/kubernetes@v1.37.2 pkg/apis/resource/v1/zz_generated.validations.go).
		NameDeclarative: declarative.LongName,
		CreateStrategy:  Strategy,
		UpdateStrategy:  Strategy,
		TableConvertor:  TableConvertor,
	})
}

type strategy struct{ generic.SpecGeneration }

// Strategy is the create and update strategy of device classes.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy     = Strategy
	_ generic.UpdateStrategy     = Strategy
	_ generic.GenerationStrategy = Strategy
)

func (strategy) NamespaceScoped() bool                            { return false }
func (strategy) PrepareForCreate(context.Context, runtime.Object) {}
func (strategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {
}
func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return resource.ValidateDeviceClass(obj.(*resourcev1.DeviceClass))
}
func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return resource.ValidateDeviceClassUpdate(obj.(*resourcev1.DeviceClass), old.(*resourcev1.DeviceClass))
}
func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// TableConvertor renders device classes as upstream's printDeviceClass
// (pkg/printers/internalversion/printers.go, v1.37): NAME AGE.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{table.NameColumn, table.AgeColumn},
	Row: func(obj runtime.Object) ([]any, bool) {
		c, ok := obj.(*resourcev1.DeviceClass)
		if !ok {
			return nil, false
		}
		return []any{c.Name, table.Since(c.CreationTimestamp)}, true
	},
}
