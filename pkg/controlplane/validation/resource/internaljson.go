package resource

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
)

// internalForm renders v, a resource.k8s.io/v1 value, as encoding/json
// renders upstream's internal type of it, which is what upstream's
// handwritten errors show as their value (field.Error marshals BadValue):
// internal types have no JSON tags, so every field is named by its Go name
// and none is omitted (nil is null), and embedded structs are flattened.
// Values of apimachinery's own types (ObjectMeta, Time, Quantity,
// RawExtension...), which the internal types share, keep their JSON form.
// Structs of other API groups are taken as shared too, which holds for the
// claim template subtree it is used on, not in general.
type internalForm struct{ v any }

func (f internalForm) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := writeInternal(&b, reflect.ValueOf(f.v)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

// ownJSON reports whether t keeps its JSON form in internal types.
func ownJSON(t reflect.Type) bool {
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) {
		return true
	}
	pkg := t.PkgPath()
	return pkg != "" && pkg != "k8s.io/api/resource/v1" && t.Kind() == reflect.Struct
}

func writeInternal(b *bytes.Buffer, v reflect.Value) error {
	if !v.IsValid() {
		b.WriteString("null")
		return nil
	}
	t := v.Type()
	if ownJSON(t) {
		return writeJSON(b, v.Interface())
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		return writeInternal(b, v.Elem())
	case reflect.Slice:
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		fallthrough
	case reflect.Array:
		b.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeInternal(b, v.Index(i)); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case reflect.Map:
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, k.String()); err != nil {
				return err
			}
			b.WriteByte(':')
			if err := writeInternal(b, v.MapIndex(k)); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case reflect.Struct:
		b.WriteByte('{')
		first := true
		if err := writeFields(b, v, &first); err != nil {
			return err
		}
		b.WriteByte('}')
		return nil
	}
	return writeJSON(b, v.Interface())
}

// writeFields writes v's fields as members of the object being written,
// embedded structs' in place.
func writeFields(b *bytes.Buffer, v reflect.Value, first *bool) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if ownJSON(f.Type) {
				// Flattened with its own tags: merge its members.
				var inner bytes.Buffer
				if err := writeJSON(&inner, v.Field(i).Interface()); err != nil {
					return err
				}
				if m := bytes.TrimSpace(inner.Bytes()); len(m) > 2 {
					if !*first {
						b.WriteByte(',')
					}
					b.Write(m[1 : len(m)-1])
					*first = false
				}
				continue
			}
			if err := writeFields(b, v.Field(i), first); err != nil {
				return err
			}
			continue
		}
		if !*first {
			b.WriteByte(',')
		}
		*first = false
		if err := writeJSON(b, f.Name); err != nil {
			return err
		}
		b.WriteByte(':')
		if err := writeInternal(b, v.Field(i)); err != nil {
			return err
		}
	}
	return nil
}

func writeJSON(b *bytes.Buffer, v any) error {
	j, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b.Write(j)
	return nil
}
