package generic

import (
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// validationMeta is the metadata of an object being validated, its
// managed fields read once: apimachinery's ValidateObjectMetaAccessor and
// ValidateObjectMetaAccessorUpdate each call GetManagedFields on the new
// object, which for a custom resource (*unstructured.Unstructured)
// converts every entry by reflection, fieldsV1 through a JSON round trip.
// The validators only read the entries.
type validationMeta struct {
	metav1.Object
	managedFields []metav1.ManagedFieldsEntry
	read          bool
}

func (m *validationMeta) GetManagedFields() []metav1.ManagedFieldsEntry {
	if !m.read {
		m.managedFields, m.read = managedFieldsForValidation(m.Object), true
	}
	return m.managedFields
}

// managedFieldsForValidation is obj.GetManagedFields() as far as
// apimachinery's ValidateManagedFields can tell: for an unstructured
// object whose entries have the shape the field manager writes, the
// entries without FieldsV1 (the validation does not read it); for
// anything else, GetManagedFields' own result. An entry GetManagedFields
// would fail to convert (it then answers nil) is never in the first case:
// fieldsV1 must be a value encoding/json can marshal and time a string
// that parses as RFC 3339, as their UnmarshalJSON methods require.
func managedFieldsForValidation(obj metav1.Object) []metav1.ManagedFieldsEntry {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj.GetManagedFields()
	}
	if out, ok := unstructuredManagedFields(u.Object); ok {
		return out
	}
	return u.GetManagedFields()
}

// unstructuredManagedFields converts metadata.managedFields of an
// unstructured object whose entries hold only strings where the entry's
// fields are strings (no other keys' values are read, as FromUnstructured
// ignores unknown keys); ok is false for anything else.
func unstructuredManagedFields(obj map[string]any) (out []metav1.ManagedFieldsEntry, ok bool) {
	md, isMap := obj["metadata"].(map[string]any)
	if !isMap {
		return nil, false
	}
	v, found := md["managedFields"]
	if !found {
		return nil, false
	}
	items, isSlice := v.([]any)
	if !isSlice {
		return nil, false
	}
	out = make([]metav1.ManagedFieldsEntry, 0, len(items))
	for _, item := range items {
		m, isMap := item.(map[string]any)
		if !isMap {
			return nil, false
		}
		var e metav1.ManagedFieldsEntry
		for k, v := range m {
			switch k {
			case "manager", "operation", "apiVersion", "fieldsType", "subresource", "time":
				s, isString := v.(string)
				if !isString {
					return nil, false
				}
				switch k {
				case "manager":
					e.Manager = s
				case "operation":
					e.Operation = metav1.ManagedFieldsOperationType(s)
				case "apiVersion":
					e.APIVersion = s
				case "fieldsType":
					e.FieldsType = s
				case "subresource":
					e.Subresource = s
				case "time":
					t, err := time.Parse(time.RFC3339, s)
					if err != nil {
						return nil, false
					}
					e.Time = &metav1.Time{Time: t.Local()}
				}
			case "fieldsV1":
				if !marshalable(v, 0) {
					return nil, false
				}
			}
		}
		out = append(out, e)
	}
	return out, true
}

// marshalable tells whether encoding/json surely marshals v: the values
// a JSON decode into interface{} makes (and int64, unstructured's
// integers), finite numbers, not nested deeper than any real fieldsV1.
func marshalable(v any, depth int) bool {
	if depth > 100 {
		return false
	}
	switch v := v.(type) {
	case nil, string, bool, int64:
		return true
	case float64:
		return !math.IsInf(v, 0) && !math.IsNaN(v)
	case map[string]any:
		for _, e := range v {
			if !marshalable(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range v {
			if !marshalable(e, depth+1) {
				return false
			}
		}
		return true
	default:
		return false
	}
}
