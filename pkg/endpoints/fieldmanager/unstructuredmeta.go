package fieldmanager

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/kapi-dev/kapi/pkg/api/unstructuredmeta"
)

// directFields is an unstructured object (a custom resource) as an
// update's field manager reads and writes it: its managedFields are read
// and written by pkg/api/unstructuredmeta (the same entries and the same
// metadata.managedFields as Unstructured's own accessors, without their
// reflective conversion through runtime.DefaultUnstructuredConverter,
// which was a quarter of the field manager's CPU per update). Every
// other method is the object's.
//
// The field manager reaches an object's managedFields only through
// meta.Accessor, which answers directFields itself; everything else it
// does with an object goes through the convertor and the type converter,
// which Manager wraps to unwrap it first ([unwrapConvertor],
// [unwrapTypeConverter]); UpdateNoErrors returns the object unwrapped.
type directFields struct{ *unstructured.Unstructured }

func (o directFields) GetManagedFields() []metav1.ManagedFieldsEntry {
	return unstructuredmeta.ManagedFields(o.Unstructured)
}

func (o directFields) SetManagedFields(entries []metav1.ManagedFieldsEntry) {
	unstructuredmeta.SetManagedFields(o.Unstructured, entries)
}

// wrapUnstructured returns obj as directFields when it is unstructured.
func wrapUnstructured(obj runtime.Object) runtime.Object {
	if u, ok := obj.(*unstructured.Unstructured); ok && u != nil {
		return directFields{u}
	}
	return obj
}

// unwrap returns the object directFields holds, or obj.
func unwrap(obj runtime.Object) runtime.Object {
	if d, ok := obj.(directFields); ok {
		return d.Unstructured
	}
	return obj
}

// unwrapConvertor converts the objects directFields holds.
type unwrapConvertor struct{ runtime.ObjectConvertor }

func (c unwrapConvertor) Convert(in, out, context any) error {
	if o, ok := in.(runtime.Object); ok {
		in = unwrap(o)
	}
	if o, ok := out.(runtime.Object); ok {
		out = unwrap(o)
	}
	return c.ObjectConvertor.Convert(in, out, context)
}

func (c unwrapConvertor) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	return c.ObjectConvertor.ConvertToVersion(unwrap(in), target)
}

// unwrapTypeConverter types the objects directFields holds.
type unwrapTypeConverter struct{ managedfields.TypeConverter }

func (c unwrapTypeConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	return c.TypeConverter.ObjectToTyped(unwrap(obj), opts...)
}
