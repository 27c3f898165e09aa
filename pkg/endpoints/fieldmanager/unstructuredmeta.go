package fieldmanager

import (
	"maps"

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

// unwrap returns the object directFields or liveFields holds, or obj.
func unwrap(obj runtime.Object) runtime.Object {
	switch d := obj.(type) {
	case directFields:
		return d.Unstructured
	case liveFields:
		return d.Unstructured
	}
	return obj
}

// liveFields is the live object of an update (as directFields) whose
// managedFields the update's typed comparison leaves out: the convertor
// hands the structured-merge manager the live object without
// metadata.managedFields ([unwrapConvertor]). Upstream's compares the
// live object, managedFields included, with the new one, from which the
// field manager has removed them. Leaving them out changes nothing when
// skippableLiveManagedFields says so; it spares the validating walk of
// every entry's fields and the removal of .metadata.managedFields from
// every other manager's set on every update.
type liveFields struct{ directFields }

// skippableLiveManagedFields tells whether the result of an update does
// not depend on the live object's managedFields being in its typed
// value. They count twice there: (1) typing the live object fails when
// they do not fit ObjectMeta's schema (upstream's update then keeps the
// live object's managedFields): here they must be the shape the field
// manager writes, string fields and fieldsV1 objects of objects, all of
// which fit; (2) the comparison reports .metadata.managedFields removed
// (the new object has none), which removes it from every other
// manager's set: here no entry of the live or the new object (whichever
// the field manager decodes) may name it or anything under it. Anything
// unusual keeps them.
func skippableLiveManagedFields(live, newObj *unstructured.Unstructured) bool {
	md, ok := live.Object["metadata"].(map[string]any)
	if !ok {
		return false
	}
	entries, ok := md["managedFields"].([]any)
	if !ok || len(entries) == 0 {
		return false
	}
	for _, e := range entries {
		entry, ok := e.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range entry {
			switch k {
			case "apiVersion", "fieldsType", "manager", "operation", "subresource", "time":
				if _, ok := v.(string); !ok {
					return false
				}
			case "fieldsV1":
				f, ok := v.(map[string]any)
				if !ok || !objectsOfObjects(f, 0) || namesManagedFields(f) {
					return false
				}
			default:
				return false
			}
		}
	}
	md, ok = newObj.Object["metadata"].(map[string]any)
	if !ok {
		return true
	}
	v, ok := md["managedFields"]
	if !ok {
		return true
	}
	if entries, ok = v.([]any); !ok {
		return false
	}
	for _, e := range entries {
		entry, ok := e.(map[string]any)
		if !ok {
			return false
		}
		if v, ok := entry["fieldsV1"]; ok {
			f, ok := v.(map[string]any)
			if !ok || namesManagedFields(f) {
				return false
			}
		}
	}
	return true
}

// objectsOfObjects tells whether every value under f is an object.
func objectsOfObjects(f map[string]any, depth int) bool {
	if depth > 100 {
		return false
	}
	for _, v := range f {
		m, ok := v.(map[string]any)
		if !ok || !objectsOfObjects(m, depth+1) {
			return false
		}
	}
	return true
}

// namesManagedFields tells whether fieldsV1 f may hold
// .metadata.managedFields or a field under it.
func namesManagedFields(f map[string]any) bool {
	v, ok := f["f:metadata"]
	if !ok {
		return false
	}
	m, ok := v.(map[string]any)
	if !ok {
		return true
	}
	_, ok = m["f:managedFields"]
	return ok
}

// withoutManagedFields is u without metadata.managedFields: u itself when
// it has none, else a copy of its top level and metadata (u is not
// changed).
func withoutManagedFields(u *unstructured.Unstructured) *unstructured.Unstructured {
	md, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return u
	}
	if _, ok := md["managedFields"]; !ok {
		return u
	}
	obj := maps.Clone(u.Object)
	md = maps.Clone(md)
	delete(md, "managedFields")
	obj["metadata"] = md
	return &unstructured.Unstructured{Object: obj}
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
	out, err := c.ObjectConvertor.ConvertToVersion(unwrap(in), target)
	if _, live := in.(liveFields); live && err == nil {
		if u, ok := out.(*unstructured.Unstructured); ok {
			return withoutManagedFields(u), nil
		}
	}
	return out, err
}

// unwrapTypeConverter types the objects directFields holds.
type unwrapTypeConverter struct{ managedfields.TypeConverter }

func (c unwrapTypeConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	return c.TypeConverter.ObjectToTyped(unwrap(obj), opts...)
}
