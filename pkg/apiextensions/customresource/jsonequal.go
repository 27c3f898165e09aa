package customresource

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
)

// semanticEqual is equality.Semantic.DeepEqual(a, b) for values of an
// unstructured object, without reflection where the values are those a
// JSON decode makes (see jsonEqual); anything else takes DeepEqual.
func semanticEqual(a, b any) bool {
	if eq, ok := jsonEqual(a, b, 0); ok {
		return eq
	}
	return equality.Semantic.DeepEqual(a, b)
}

// jsonEqual compares values made of maps of string to any, slices of any,
// strings, booleans, int64, float64 and nil by the rules of apimachinery's
// forked reflect.DeepEqual as equality.Semantic uses it: values of
// different dynamic types differ; a nil and an empty map (slice) are
// equal; a map (slice) is equal to itself, whatever it holds; a key
// missing from one map differs from any value, nil included; scalars
// compare with == (so NaN differs from itself). ok is false when a value
// of another type (one Semantic may have an equality function for) is
// met before the answer is known, or the nesting is deeper than any
// object kapi stores.
func jsonEqual(a, b any, depth int) (equal, ok bool) {
	if a == nil || b == nil {
		return a == nil && b == nil, true
	}
	if depth > 1000 {
		return false, false
	}
	switch av := a.(type) {
	case map[string]any:
		bv, same := b.(map[string]any)
		if !same {
			return false, true
		}
		if len(av) != len(bv) {
			return false, true
		}
		if len(av) == 0 || reflect.ValueOf(av).UnsafePointer() == reflect.ValueOf(bv).UnsafePointer() {
			return true, true
		}
		for k, x := range av {
			y, found := bv[k]
			if !found {
				return false, true
			}
			if eq, ok := jsonEqual(x, y, depth+1); !ok || !eq {
				return false, ok
			}
		}
		return true, true
	case []any:
		bv, same := b.([]any)
		if !same {
			return false, true
		}
		if len(av) != len(bv) {
			return false, true
		}
		if len(av) == 0 || &av[0] == &bv[0] {
			return true, true
		}
		for i := range av {
			if eq, ok := jsonEqual(av[i], bv[i], depth+1); !ok || !eq {
				return false, ok
			}
		}
		return true, true
	case string:
		bv, same := b.(string)
		return same && av == bv, true
	case bool:
		bv, same := b.(bool)
		return same && av == bv, true
	case int64:
		bv, same := b.(int64)
		return same && av == bv, true
	case float64:
		bv, same := b.(float64)
		return same && av == bv, true
	}
	return false, false
}
