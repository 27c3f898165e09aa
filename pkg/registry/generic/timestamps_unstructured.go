package generic

import (
	"time"
	"unicode/utf8"

	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
)

// compareUnstructuredTimestamps is compareTypedTimestamps for two
// unstructured objects (custom resources), read from their maps without
// decoding the managed fields entries or comparing by reflection: that
// decoding and reflection cost every custom-resource update ~3 KB and a
// few microseconds (session 23). It answers only when it can tell the
// outcome exactly as the typed comparison would — "unequal_objects_fast"
// or "unequal_objects_slow"; ok is false when the objects are the same
// but for the times (the typed comparison then puts them back) and
// whenever an entry or value is not of the plain shape it reads (an
// unknown key, a value of another type, a time that does not parse, a
// number in fieldsV1): the typed comparison decides those.
// TestUnstructuredTimestampsAsTyped holds it to the typed comparison.
func compareUnstructuredTimestamps(obj, old map[string]any) (outcome string, ok bool) {
	newMF, oldMF := rawManagedFields(obj), rawManagedFields(old)
	// Lengths that differ, or none: the typed entries' lengths differ or
	// are 0 too (an entry that does not decode makes its side's list nil).
	if len(newMF) == 0 || len(newMF) != len(oldMF) {
		return metrics.TimestampsUnequalFast, true
	}
	newEntries := make([]rawEntry, 0, 4)
	oldEntries := make([]rawEntry, 0, 4)
	for i := range newMF {
		n, ok1 := parseRawEntry(newMF[i])
		o, ok2 := parseRawEntry(oldMF[i])
		if !ok1 || !ok2 {
			return "", false
		}
		newEntries, oldEntries = append(newEntries, n), append(oldEntries, o)
	}
	timesUnchanged := true
	for i := range newEntries {
		if !newEntries[i].sameTime(&oldEntries[i]) {
			timesUnchanged = false
			break
		}
	}
	if timesUnchanged {
		return metrics.TimestampsUnequalFast, true
	}
	for i := range newEntries {
		if !newEntries[i].equalBesidesTime(&oldEntries[i]) {
			return metrics.TimestampsUnequalFast, true
		}
	}
	if !jsonEqualBesides(obj, old, "metadata", "managedFields") {
		return metrics.TimestampsUnequalSlow, true
	}
	return "", false
}

// rawManagedFields is an object's metadata.managedFields list, nil when
// there is none or it is not a list.
func rawManagedFields(obj map[string]any) []any {
	md, _ := obj["metadata"].(map[string]any)
	mf, _ := md["managedFields"].([]any)
	return mf
}

// rawEntry is a managed fields entry read from its map.
type rawEntry struct {
	manager, operation, apiVersion, fieldsType, subresource string
	time                                                    time.Time
	hasTime                                                 bool
	fields                                                  map[string]any
	hasFields                                               bool
}

// parseRawEntry reads an entry whose keys are all ManagedFieldsEntry's,
// with strings where it has strings, a time in RFC 3339 (as metav1.Time
// reads it) and fieldsV1 an object of objects, lists, strings and
// booleans (whose JSON, which the typed entry keeps, is equal exactly when
// the values are); false otherwise.
func parseRawEntry(v any) (rawEntry, bool) {
	var e rawEntry
	m, ok := v.(map[string]any)
	if !ok {
		return e, false
	}
	for k, v := range m {
		switch k {
		case "manager", "operation", "apiVersion", "fieldsType", "subresource":
			s, ok := v.(string)
			if !ok {
				return e, false
			}
			switch k {
			case "manager":
				e.manager = s
			case "operation":
				e.operation = s
			case "apiVersion":
				e.apiVersion = s
			case "fieldsType":
				e.fieldsType = s
			default:
				e.subresource = s
			}
		case "time":
			s, ok := v.(string)
			if !ok {
				return e, false
			}
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return e, false
			}
			e.time, e.hasTime = t, true
		case "fieldsV1":
			f, ok := v.(map[string]any)
			if !ok || f == nil || !plainFields(f) {
				return e, false
			}
			e.fields, e.hasFields = f, true
		default:
			return e, false
		}
	}
	return e, true
}

// plainFields reports whether v holds only objects, lists, strings,
// booleans and nulls, its strings and keys valid UTF-8 (JSON encoding
// would make different invalid strings the same).
func plainFields(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if !utf8.ValidString(k) || !plainFields(x) {
				return false
			}
		}
	case []any:
		for _, x := range v {
			if !plainFields(x) {
				return false
			}
		}
	case string:
		return utf8.ValidString(v)
	case bool, nil:
	default:
		return false
	}
	return true
}

// sameTime is metav1.Time's Equal of the two entries' times.
func (e *rawEntry) sameTime(o *rawEntry) bool {
	if e.hasTime != o.hasTime {
		return false
	}
	return !e.hasTime || e.time.Equal(o.time)
}

// equalBesidesTime is the typed entries' equality without their times:
// the strings, and fieldsV1's JSON (equal exactly when the plain values
// are, nil objects and lists differing from empty ones).
func (e *rawEntry) equalBesidesTime(o *rawEntry) bool {
	return e.manager == o.manager && e.operation == o.operation && e.apiVersion == o.apiVersion &&
		e.fieldsType == o.fieldsType && e.subresource == o.subresource &&
		e.hasFields == o.hasFields && (!e.hasFields || strictPlainEqual(e.fields, o.fields))
}

// strictPlainEqual compares plain values (see plainFields) as their JSON
// compares: a nil object or list is null (as nil is), unlike an empty one.
func strictPlainEqual(a, b any) bool {
	if jsonNull(a) || jsonNull(b) {
		return jsonNull(a) && jsonNull(b)
	}
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, av := range a {
			bv, ok := b[k]
			if !ok || !strictPlainEqual(av, bv) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !strictPlainEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	case string:
		b, ok := b.(string)
		return ok && a == b
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	}
	return false
}

// jsonNull reports whether v encodes as JSON null: nil, or a nil object
// or list.
func jsonNull(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]any:
		return v == nil
	case []any:
		return v == nil
	}
	return false
}

// jsonEqualBesides is upstream's equalIgnoringValueAtPath: a and b
// compared but for the value at path, each other value with jsonEqual.
func jsonEqualBesides(a, b any, path ...string) bool {
	if len(path) == 0 {
		return true
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		return true
	}
	if len(am) != len(bm) {
		return false
	}
	for k, av := range am {
		bv, ok := bm[k]
		switch {
		case !ok:
			return false
		case k == path[0]:
			if !jsonEqualBesides(av, bv, path[1:]...) {
				return false
			}
		case !jsonEqual(av, bv):
			return false
		}
	}
	return true
}

// jsonEqual is the comparison's semantic DeepEqual (empty and nil
// objects and lists equal, dynamic types compared) for the values JSON
// decodes to, without reflection; any other value is compared by that
// DeepEqual itself.
func jsonEqual(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok {
			return false
		}
		if len(a) == 0 || len(b) == 0 {
			return len(a) == len(b)
		}
		if len(a) != len(b) {
			return false
		}
		for k, av := range a {
			bv, ok := b[k]
			if !ok || !jsonEqual(av, bv) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok {
			return false
		}
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if !jsonEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	case string:
		b, ok := b.(string)
		return ok && a == b
	case int64:
		b, ok := b.(int64)
		return ok && a == b
	case float64:
		b, ok := b.(float64)
		return ok && a == b
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	}
	return timestampEqualities().DeepEqual(a, b)
}
