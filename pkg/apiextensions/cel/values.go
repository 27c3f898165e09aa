package cel

import (
	"encoding/base64"
	"time"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
)

// valueOf converts an unstructured value into the value rules see with
// the node's type d: object properties under their escaped names,
// integers of number fields as doubles, strings of format byte,
// duration, date and date-time as bytes, durations and timestamps (a
// value that does not parse becomes an error, reported by the rules that
// read it). Nothing is modified in place.
func valueOf(d *declType, v any) any {
	out, _ := convert(d, v)
	return out
}

// convert is valueOf; changed is false when v is returned as it is.
func convert(d *declType, v any) (any, bool) {
	if d == nil || v == nil {
		return v, false
	}
	switch d.kind {
	case kindInt:
		if f, ok := v.(float64); ok && f == float64(int64(f)) {
			return int64(f), true
		}
	case kindDouble:
		switch n := v.(type) {
		case int64:
			return float64(n), true
		case int:
			return float64(n), true
		case int32:
			return float64(n), true
		}
	case kindScalar:
		if s, ok := v.(string); ok && d.format != "" {
			return formatValue(d.format, s), true
		}
	case kindList:
		l, ok := v.([]any)
		if !ok {
			return v, false
		}
		var out []any
		for i, it := range l {
			c, changed := convert(d.elem, it)
			if out == nil && changed {
				out = make([]any, len(l))
				copy(out, l[:i])
			}
			if out != nil {
				out[i] = c
			}
		}
		if d.listType != "" {
			if out == nil {
				out = l
			}
			return &keyedList{Lister: types.DefaultTypeAdapter.NativeToValue(out).(traits.Lister), keys: d.mapKeys}, true
		}
		if out == nil {
			return v, false
		}
		return out, true
	case kindMap:
		m, ok := v.(map[string]any)
		if !ok {
			return v, false
		}
		var out map[string]any
		for k, it := range m {
			c, changed := convert(d.elem, it)
			if out == nil && changed {
				out = make(map[string]any, len(m))
				for k2, v2 := range m {
					out[k2] = v2
				}
			}
			if out != nil {
				out[k] = c
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	case kindObject:
		m, ok := v.(map[string]any)
		if !ok {
			return v, false
		}
		return objectValue(d, m)
	}
	return v, false
}

// objectValue converts an object's properties: declared ones under
// their escaped names, with their types; others as they are.
func objectValue(d *declType, m map[string]any) (any, bool) {
	var out map[string]any
	for esc, f := range d.fields {
		v, ok := m[f.name]
		if !ok {
			continue
		}
		c, changed := convert(f.decl, v)
		if esc == f.name && !changed {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(m))
			for k, v2 := range m {
				out[k] = v2
			}
		}
		if esc != f.name {
			delete(out, f.name)
		}
		out[esc] = c
	}
	if out == nil {
		return m, false
	}
	return out, true
}

// formatValue parses a string of one of the formats CEL types
// specially; a bad string becomes an error value.
func formatValue(format, s string) any {
	switch format {
	case "byte":
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return types.NewErr("invalid base64 value %q: %v", s, err)
		}
		return types.Bytes(b)
	case "duration":
		d, err := strfmt.ParseDuration(s)
		if err != nil {
			return types.NewErr("invalid duration %q: %v", s, err)
		}
		return types.Duration{Duration: d}
	case "date":
		t, err := time.Parse(strfmt.RFC3339FullDate, s)
		if err != nil {
			return types.NewErr("invalid date %q: %v", s, err)
		}
		return types.Timestamp{Time: t}
	case "date-time":
		t, err := strfmt.ParseDateTime(s)
		if err != nil {
			return types.NewErr("invalid date-time %q: %v", s, err)
		}
		return types.Timestamp{Time: time.Time(t)}
	}
	return s
}

// keyedList is a list-type=set (keys nil) or list-type=map list:
// equal to another list of the same items in any order, map-list items
// matched by their keys, as upstream.
type keyedList struct {
	traits.Lister
	keys []string
}

// Equal implements ref.Val.
func (l *keyedList) Equal(other ref.Val) ref.Val {
	o, ok := other.(traits.Lister)
	if !ok {
		return types.False
	}
	if l.Size() != o.Size() {
		return types.False
	}
	n := int(l.Size().(types.Int))
	for i := range n {
		item := l.Get(types.Int(i))
		if len(l.keys) == 0 {
			if o.Contains(item) != types.True {
				return types.False
			}
			continue
		}
		found := false
		for j := range n {
			cand := o.Get(types.Int(j))
			if sameKeys(item, cand, l.keys) {
				found = item.Equal(cand) == types.True
				break
			}
		}
		if !found {
			return types.False
		}
	}
	return types.True
}

// sameKeys reports whether two map-list items have the same keys.
func sameKeys(a, b ref.Val, keys []string) bool {
	am, aok := a.(traits.Mapper)
	bm, bok := b.(traits.Mapper)
	if !aok || !bok {
		return false
	}
	for _, k := range keys {
		av, afound := am.Find(types.String(k))
		bv, bfound := bm.Find(types.String(k))
		if afound != bfound || (afound && av.Equal(bv) != types.True) {
			return false
		}
	}
	return true
}
