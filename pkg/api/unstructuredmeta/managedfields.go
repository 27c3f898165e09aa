// Package unstructuredmeta reads the metadata of unstructured objects
// (custom resources) without apimachinery's reflective conversion:
// Unstructured.GetManagedFields converts every managedFields entry through
// runtime.DefaultUnstructuredConverter, fieldsV1 and time through a JSON
// round trip each.
package unstructuredmeta

import (
	"encoding/json"
	"math"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ManagedFields is obj.GetManagedFields(): for an unstructured object
// whose entries have the shape the field manager writes, the same entries
// (deep-equal) converted directly; for anything else, GetManagedFields'
// own result. An entry GetManagedFields would fail to convert (it then
// answers nil and reports the error) always takes GetManagedFields: only
// strings are taken where the entry's fields are strings, time must parse
// as RFC 3339 and fieldsV1 be a value encoding/json surely marshals.
func ManagedFields(obj metav1.Object) []metav1.ManagedFieldsEntry {
	return managedFields(obj, true)
}

// ManagedFieldsForValidation is [ManagedFields] without FieldsV1 in the
// entries converted directly (apimachinery's ValidateManagedFields, which
// the result is for, does not read it; converting it is a JSON encoding).
func ManagedFieldsForValidation(obj metav1.Object) []metav1.ManagedFieldsEntry {
	return managedFields(obj, false)
}

func managedFields(obj metav1.Object, withFields bool) []metav1.ManagedFieldsEntry {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj.GetManagedFields()
	}
	if out, ok := unstructuredManagedFields(u.Object, withFields); ok {
		return out
	}
	return u.GetManagedFields()
}

// unstructuredManagedFields converts metadata.managedFields of an
// unstructured object whose entries hold only strings where the entry's
// fields are strings (no other keys' values are read, as FromUnstructured
// ignores unknown keys); ok is false for anything else.
func unstructuredManagedFields(obj map[string]any, withFields bool) (out []metav1.ManagedFieldsEntry, ok bool) {
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
				if !isString || !SetEntryField(&e, k, s) {
					return nil, false
				}
			case "fieldsV1":
				if !marshalable(v, 0) {
					return nil, false
				}
				if withFields && v != nil {
					// As FromUnstructured: FieldsV1.UnmarshalJSON of the
					// value's encoding.
					raw, ok := appendFields(nil, v, 0)
					if !ok {
						var err error
						if raw, err = json.Marshal(v); err != nil {
							return nil, false
						}
					}
					e.FieldsV1 = &metav1.FieldsV1{}
					if err := e.FieldsV1.UnmarshalJSON(raw); err != nil {
						return nil, false
					}
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

// appendFields appends json.Marshal(v) for the shape the field manager
// writes in fieldsV1: objects whose values are objects, to any depth. ok
// is false for anything else (and for objects nested deeper than
// marshalable allows).
func appendFields(buf []byte, v any, depth int) ([]byte, bool) {
	m, ok := v.(map[string]any)
	if !ok || m == nil || depth > 100 {
		return nil, false
	}
	if len(m) == 0 {
		return append(buf, "{}"...), true
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // as encoding/json orders map keys
	buf = append(buf, '{')
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		if plainKey(k) {
			buf = append(buf, '"')
			buf = append(buf, k...)
			buf = append(buf, '"')
		} else {
			q, err := json.Marshal(k)
			if err != nil {
				return nil, false
			}
			buf = append(buf, q...)
		}
		buf = append(buf, ':')
		if buf, ok = appendFields(buf, m[k], depth+1); !ok {
			return nil, false
		}
	}
	return append(buf, '}'), true
}

// plainKey tells whether encoding/json writes k between quotes as it is:
// printable ASCII without quotes, backslashes or the characters it
// escapes for HTML.
func plainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		switch c := k[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// SetEntryField sets the string field k of a managedFields entry ("manager",
// "operation", "apiVersion", "fieldsType", "subresource", "time") to s as
// its JSON holds it (a time in RFC 3339, read as local time, as
// metav1.Time's decoding); false for another key or a time that does not
// parse.
func SetEntryField(e *metav1.ManagedFieldsEntry, k, s string) bool {
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
			return false
		}
		e.Time = &metav1.Time{Time: t.Local()}
	default:
		return false
	}
	return true
}
