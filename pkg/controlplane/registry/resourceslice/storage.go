package resourceslice

import (
	"context"
	"fmt"

	resourcev1 "k8s.io/api/resource/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/resource"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/table"
	"github.com/kapi-dev/kapi/pkg/storage"
)

// Resource is the resource served.
var Resource = resourcev1.Resource("resourceslices")

// FieldLabels are the selectable fields beyond metadata.name.
var FieldLabels = []string{resourcev1.ResourceSliceSelectorNodeName, resourcev1.ResourceSliceSelectorDriver, resourcev1.ResourceSliceSelectorPoolName}

// FieldLabelConversion accepts the field selector labels of resource
// slices, and refuses the others in the words of upstream's
// (pkg/apis/resource/v1/conversion.go, v1.37.2).
var FieldLabelConversion = generic.FieldLabelConversionRefusing(func(label string) error {
	return fmt.Errorf("field label not supported for %s: %s", resourcev1.SchemeGroupVersion.WithKind("ResourceSlice"), label)
}, append([]string{"metadata.name"}, FieldLabels...)...)

// GetAttrs returns a slice's labels and selectable fields.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	ls, fs, err := storage.DefaultAttrs(obj)
	if err != nil {
		return nil, nil, err
	}
	if s, ok := obj.(*resourcev1.ResourceSlice); ok {
		node := ""
		if s.Spec.NodeName != nil {
			node = *s.Spec.NodeName
		}
		fs[resourcev1.ResourceSliceSelectorNodeName] = node
		fs[resourcev1.ResourceSliceSelectorDriver] = s.Spec.Driver
		fs[resourcev1.ResourceSliceSelectorPoolName] = s.Spec.Pool.Name
	}
	return ls, fs, nil
}

// NewREST returns the store of resourceslices.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, resourcev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &resourcev1.ResourceSlice{} },
		NewListFunc:               func() runtime.Object { return &resourcev1.ResourceSliceList{} },
		ReturnDeletedObject:       true, // as upstream: DELETE answers with the object
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: resourcev1.Resource("resourceslice"),
		GetAttrs:                  GetAttrs,
		FieldLabels:               FieldLabels,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
}

type strategy struct{ generic.SpecGeneration }

// Strategy is the create and update strategy of resource slices.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy     = Strategy
	_ generic.UpdateStrategy     = Strategy
	_ generic.GenerationStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return false }

// PrepareForCreate drops the fields of features that are off by default.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	dropDisabledFields(obj.(*resourcev1.ResourceSlice), nil)
}

// PrepareForUpdate drops the fields of features that are off by default
// and that the stored slice does not use.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	dropDisabledFields(obj.(*resourcev1.ResourceSlice), old.(*resourcev1.ResourceSlice))
}
func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return resource.ValidateResourceSlice(obj.(*resourcev1.ResourceSlice))
}
func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return resource.ValidateResourceSliceUpdate(obj.(*resourcev1.ResourceSlice), old.(*resourcev1.ResourceSlice))
}
func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

var (
	specDocs = resourcev1beta1.ResourceSliceSpec{}.SwaggerDoc()
	poolDocs = resourcev1beta1.ResourcePool{}.SwaggerDoc()
)

// TableConvertor renders slices as upstream's printResourceSlice
// (pkg/printers/internalversion/printers.go, v1.37): NAME NODE DRIVER POOL
// AGE, the node empty for slices not bound to one node.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Node", Type: "string", Description: specDocs["nodeName"]},
		{Name: "Driver", Type: "string", Description: specDocs["driver"]},
		{Name: "Pool", Type: "string", Description: poolDocs["name"]},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		s, ok := obj.(*resourcev1.ResourceSlice)
		if !ok {
			return nil, false
		}
		node := ""
		if s.Spec.NodeName != nil {
			node = *s.Spec.NodeName
		}
		return []any{s.Name, node, s.Spec.Driver, s.Spec.Pool.Name, table.Since(s.CreationTimestamp)}, true
	},
}
