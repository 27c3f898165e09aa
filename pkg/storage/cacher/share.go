package cacher

import (
	"bytes"
	"maps"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// shareWithCached shares each new entry's unchanged parts with the cached
// state it replaces (see shareUnchanged), outside the write lock: apply
// and replace, the only writers of the cache's objects, run on the
// reflector goroutine, so the state read here is the one apply replaces.
func (c *Cacher) shareWithCached(entries []*entry) {
	prevs := make([]*entry, len(entries))
	c.mu.RLock()
	for i, e := range entries {
		prevs[i] = c.objects.get(e.key)
	}
	c.mu.RUnlock()
	for i, prev := range prevs {
		if prev != nil {
			shareUnchanged(entries[i], prev)
		}
	}
}

// shareUnchanged makes cur, the new state of a key, reuse what it has in
// common with prev, the state it replaces: the key, equal label and field
// sets, and, for custom resources (unstructured objects), every subtree of
// the object (map, list, string) equal to prev's at the same path.
//
// Why: the event window keeps every state of the last EventWindow to
// MaxEventWindow events (16,384 by default while they are younger than
// EventFreshness), decoded. Successive states of an object differ in a
// few leaves (resourceVersion, generation, the written field), yet each
// was decoded from etcd into its own maps: a small custom resource's state
// costs ~3.8 KB, nearly all of it equal to the state before. Shared, a
// state costs what changed plus the maps on the paths to it.
//
// Both entries are the cache's own and immutable once published (callers
// get deep copies; watchers only read), so sharing is invisible. It must
// run before cur is published. cur's object stays semantically equal to
// what it was; prev is not modified.
func shareUnchanged(cur, prev *entry) {
	if cur.key == prev.key {
		cur.key = prev.key
	}
	if maps.Equal(cur.labels, prev.labels) {
		cur.labels = prev.labels
	}
	if maps.Equal(cur.fields, prev.fields) {
		cur.fields = prev.fields
	}
	curObj, prevObj := cur.object(), prev.object()
	if c, ok := curObj.(*unstructured.Unstructured); ok {
		if p, ok := prevObj.(*unstructured.Unstructured); ok && c.Object != nil && p.Object != nil {
			if m, equal := shareMap(c.Object, p.Object); equal {
				c.Object = m
			}
		}
		return
	}
	// Built-in kinds: typed structs, pointers to them.
	a, b := reflect.ValueOf(curObj), reflect.ValueOf(prevObj)
	if a.Type() != b.Type() || a.Kind() != reflect.Pointer || a.IsNil() || b.IsNil() || a.Elem().Kind() != reflect.Struct {
		return
	}
	shareReflect(a.Elem(), b.Elem())
}

// shareReflect reports whether a equals b (same type), and makes a's
// settable parts that equal b's share b's storage: strings, slices, maps
// and pointed-to structs. A struct with unexported fields (time.Time,
// resource.Quantity) is compared whole and shared by its parent; so are
// maps and interfaces. Equality is reflect.DeepEqual's (nil and empty
// differ: never equal when unsure).
func shareReflect(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() && b.IsNil()
		}
		return a.Pointer() == b.Pointer() || shareReflect(a.Elem(), b.Elem())
	case reflect.Struct:
		if !typeInfoOf(a.Type()).allExported {
			return leafEqual(a, b)
		}
		equal := true
		for i := range a.NumField() {
			af, bf := a.Field(i), b.Field(i)
			if shareReflect(af, bf) {
				if af.CanSet() {
					af.Set(bf)
				}
			} else {
				equal = false
			}
		}
		return equal
	case reflect.Slice:
		if a.Type().Elem().Kind() == reflect.Uint8 {
			return a.IsNil() == b.IsNil() && bytes.Equal(a.Bytes(), b.Bytes())
		}
		if a.Len() > 0 && b.Len() > 0 && a.Pointer() == b.Pointer() && a.Len() == b.Len() {
			return true
		}
		equal := a.IsNil() == b.IsNil() && a.Len() == b.Len()
		for i := range min(a.Len(), b.Len()) {
			ai, bi := a.Index(i), b.Index(i)
			if shareReflect(ai, bi) {
				ai.Set(bi)
			} else {
				equal = false
			}
		}
		return equal
	case reflect.String:
		return a.String() == b.String()
	case reflect.Map, reflect.Interface, reflect.Array:
		return leafEqual(a, b)
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return a.Equal(b)
	}
	return false // chan, func, complex, unsafe pointers: not in API objects
}

// leafEqual compares values shareReflect does not walk into: with == when
// the type's values always compare without panicking (time.Time;
// resource.Quantity, whose pointer field makes == stricter than semantic
// equality, never looser), which does not allocate, else with
// reflect.DeepEqual.
func leafEqual(a, b reflect.Value) bool {
	if typeInfoOf(a.Type()).plainComparable {
		return a.Equal(b)
	}
	if a.Type() == stringMap {
		// Labels, annotations, selectors: without DeepEqual's allocations.
		am, bm := a.Interface().(map[string]string), b.Interface().(map[string]string)
		return (am == nil) == (bm == nil) && maps.Equal(am, bm)
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

var stringMap = reflect.TypeFor[map[string]string]()

// typeInfo is what shareReflect needs to know of a type, computed once.
type typeInfo struct {
	allExported     bool // a struct whose fields are all exported
	plainComparable bool // comparable, with no interface inside (== cannot panic)
}

var typeInfos sync.Map // reflect.Type -> typeInfo

func typeInfoOf(t reflect.Type) typeInfo {
	if v, ok := typeInfos.Load(t); ok {
		return v.(typeInfo)
	}
	info := typeInfo{plainComparable: plainComparable(t)}
	if t.Kind() == reflect.Struct {
		info.allExported = true
		for i := range t.NumField() {
			if !t.Field(i).IsExported() {
				info.allExported = false
				break
			}
		}
	}
	typeInfos.Store(t, info)
	return info
}

func plainComparable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Interface, reflect.Map, reflect.Slice, reflect.Func:
		return false
	case reflect.Array:
		return plainComparable(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !plainComparable(t.Field(i).Type) {
				return false
			}
		}
	}
	return t.Comparable()
}

// shareValue returns what to keep in place of a (a itself, or b when they
// are equal) and whether a equals b. Maps and lists in a are updated in
// place to share their equal parts with b. An equal value is returned as
// b itself, not re-boxed (a string or list converted to an interface
// value again would be allocated again).
func shareValue(a, b any) (any, bool) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return a, false
		}
		if _, equal := shareMap(av, bv); equal {
			return b, true
		}
		return a, false
	case []any:
		bv, ok := b.([]any)
		if !ok {
			return a, false
		}
		equal := len(av) == len(bv)
		for i := range min(len(av), len(bv)) {
			v, eq := shareValue(av[i], bv[i])
			av[i] = v
			equal = equal && eq
		}
		if equal {
			return b, true
		}
		return a, false
	case string:
		if bv, ok := b.(string); ok && av == bv {
			return b, true
		}
		return a, false
	case int64, float64, bool, nil:
		// The scalars of decoded JSON: comparable (b of another type
		// compares unequal, without panicking).
		if a == b {
			return b, true
		}
		return a, false
	}
	return a, false
}

// shareMap shares a's values with b's where equal (and a's keys with b's:
// a string key assigned again takes the new key's storage) and returns b
// if the maps are equal, else a.
func shareMap(a, b map[string]any) (map[string]any, bool) {
	equal := len(a) == len(b)
	for k, bv := range b {
		av, ok := a[k]
		if !ok {
			equal = false
			continue
		}
		v, eq := shareValue(av, bv)
		a[k] = v
		equal = equal && eq
	}
	if equal {
		return b, true
	}
	return a, false
}
