package cacher

import (
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

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
	c, ok := cur.obj.(*unstructured.Unstructured)
	if !ok || c.Object == nil {
		return
	}
	p, ok := prev.obj.(*unstructured.Unstructured)
	if !ok || p.Object == nil {
		return
	}
	if m, equal := shareMap(c.Object, p.Object); equal {
		c.Object = m
	}
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
