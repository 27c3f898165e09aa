package unstructuredmeta

import (
	"encoding/json"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// SetManagedFields is u.SetManagedFields(entries): the same
// metadata.managedFields (deep-equal), built directly where
// SetManagedFields converts every entry through
// runtime.DefaultUnstructuredConverter (fieldsV1 through a JSON
// round trip) and deep-copies the result. Entries of another shape than
// the field manager writes (a time that is set but zero, fieldsV1 that
// is not a JSON object of objects, metadata that is not a map) take
// SetManagedFields itself.
func SetManagedFields(u *unstructured.Unstructured, entries []metav1.ManagedFieldsEntry) {
	if entries == nil {
		u.SetManagedFields(nil)
		return
	}
	md, found := u.Object["metadata"]
	m, isMap := md.(map[string]any)
	if found && !isMap {
		u.SetManagedFields(entries)
		return
	}
	items := make([]any, 0, len(entries))
	for i := range entries {
		item, ok := managedFieldsEntry(&entries[i])
		if !ok {
			u.SetManagedFields(entries)
			return
		}
		items = append(items, item)
	}
	if u.Object == nil {
		u.Object = map[string]any{}
	}
	if !found {
		m = map[string]any{}
		u.Object["metadata"] = m
	}
	m["managedFields"] = items
}

// managedFieldsEntry is ToUnstructured of e: its fields by their JSON
// names, empty ones left out.
func managedFieldsEntry(e *metav1.ManagedFieldsEntry) (map[string]any, bool) {
	out := make(map[string]any, 6)
	if e.Manager != "" {
		out["manager"] = e.Manager
	}
	if e.Operation != "" {
		out["operation"] = string(e.Operation)
	}
	if e.APIVersion != "" {
		out["apiVersion"] = e.APIVersion
	}
	if e.Time != nil {
		if e.Time.IsZero() {
			return nil, false // the converter stores a nil value
		}
		var buf [len("2006-01-02T15:04:05+07:00")]byte // formatted on the stack
		out["time"] = string(e.Time.UTC().AppendFormat(buf[:0], time.RFC3339))
	}
	if e.FieldsType != "" {
		out["fieldsType"] = e.FieldsType
	}
	if e.FieldsV1 != nil {
		raw, err := e.FieldsV1.MarshalJSON()
		if err != nil {
			return nil, false
		}
		f, ok := parseFields(raw)
		if !ok {
			return nil, false
		}
		out["fieldsV1"] = f
	}
	if e.Subresource != "" {
		out["subresource"] = e.Subresource
	}
	return out, true
}

// parseFields decodes a fieldsV1 document as the converter does, for the
// shape the field manager writes: a JSON object whose values are objects,
// to any depth (no other values, no white space). ok is false for
// anything else.
func parseFields(raw []byte) (map[string]any, bool) {
	m, n, ok := parseObject(raw, 0, 0)
	return m, ok && n == len(raw)
}

// parseObject parses the object starting at raw[i]; it returns the index
// after it.
func parseObject(raw []byte, i, depth int) (map[string]any, int, bool) {
	if depth > 100 || i >= len(raw) || raw[i] != '{' {
		return nil, 0, false
	}
	i++
	m := map[string]any{}
	if i < len(raw) && raw[i] == '}' {
		return m, i + 1, true
	}
	for {
		key, next, ok := parseKey(raw, i)
		if !ok || next >= len(raw) || raw[next] != ':' {
			return nil, 0, false
		}
		v, next, ok := parseObject(raw, next+1, depth+1)
		if !ok {
			return nil, 0, false
		}
		m[key] = v // a repeated key: the last one, as encoding/json
		if next >= len(raw) {
			return nil, 0, false
		}
		switch raw[next] {
		case ',':
			i = next + 1
		case '}':
			return m, next + 1, true
		default:
			return nil, 0, false
		}
	}
}

// parseKey parses the JSON string starting at raw[i]; strings with
// escapes or invalid UTF-8 are decoded by encoding/json (which replaces
// the latter as the converter's decoder does).
func parseKey(raw []byte, i int) (string, int, bool) {
	if i >= len(raw) || raw[i] != '"' {
		return "", 0, false
	}
	escaped := false
	for j := i + 1; j < len(raw); j++ {
		switch c := raw[j]; {
		case c == '\\':
			escaped = true
			j++
		case c == '"':
			if !escaped && utf8.Valid(raw[i+1:j]) {
				return string(raw[i+1 : j]), j + 1, true
			}
			var s string
			if err := json.Unmarshal(raw[i:j+1], &s); err != nil {
				return "", 0, false
			}
			return s, j + 1, true
		case c < 0x20:
			return "", 0, false
		}
	}
	return "", 0, false
}
