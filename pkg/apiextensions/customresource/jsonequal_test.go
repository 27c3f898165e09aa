package customresource

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
)

// randomEqualValue is a value of an unstructured object, with the edge
// cases of equality: nil and empty maps and slices, NaN, int64 and float64
// of the same number, and (when odd) a type Semantic has an equality
// function for.
func randomEqualValue(r *rand.Rand, depth int, odd bool) any {
	n := 9
	if depth > 3 {
		n = 6
	}
	switch r.IntN(n) {
	case 0:
		return nil
	case 1:
		return []string{"a", "b", ""}[r.IntN(3)]
	case 2:
		return int64(r.IntN(3))
	case 3:
		return []float64{0, 1, 2, math.NaN()}[r.IntN(4)]
	case 4:
		return r.IntN(2) == 0
	case 5:
		if odd && r.IntN(4) == 0 {
			return []any{resource.MustParse("1"), resource.MustParse("1000m"), int32(1)}[r.IntN(3)]
		}
		return []any{map[string]any(nil), map[string]any{}, []any(nil), []any{}}[r.IntN(4)]
	case 6, 7:
		m := map[string]any{}
		for range r.IntN(4) {
			m[[]string{"x", "y", "z"}[r.IntN(3)]] = randomEqualValue(r, depth+1, odd)
		}
		return m
	default:
		s := make([]any, r.IntN(4))
		for i := range s {
			s[i] = randomEqualValue(r, depth+1, odd)
		}
		return s
	}
}

// mutateEqualValue returns v or a copy of v with one change (or, for
// shared maps and slices, v itself: identity must compare equal).
func mutateEqualValue(r *rand.Rand, v any) any {
	if r.IntN(4) == 0 {
		return v // the same value, maps and slices shared
	}
	c := copyEqualValue(v)
	switch x := c.(type) {
	case map[string]any:
		if len(x) > 0 && r.IntN(2) == 0 {
			for k := range x {
				x[k] = mutateEqualValue(r, x[k])
				break
			}
			return x
		}
		if r.IntN(2) == 0 {
			if x == nil {
				return map[string]any{"x": nil}
			}
			x["x"] = nil
		}
		return x
	case []any:
		if len(x) > 0 {
			i := r.IntN(len(x))
			x[i] = mutateEqualValue(r, x[i])
		}
		return x
	case int64:
		if r.IntN(2) == 0 {
			return float64(x)
		}
	}
	return c
}

func copyEqualValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return x
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyEqualValue(e)
		}
		return out
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyEqualValue(e)
		}
		return out
	}
	return v
}

// TestSemanticEqual: semanticEqual answers as equality.Semantic.DeepEqual
// over random values of unstructured objects and changes of them, and
// hands values of other types to it.
func TestSemanticEqual(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 11))
	fast, equal := 0, 0
	for i := range 50000 {
		odd := i%2 == 1
		a := randomEqualValue(r, 0, odd)
		b := mutateEqualValue(r, a)
		if r.IntN(8) == 0 {
			b = randomEqualValue(r, 0, odd)
		}
		want := equality.Semantic.DeepEqual(a, b)
		if got := semanticEqual(a, b); got != want {
			t.Fatalf("%#v and %#v: got %v, want %v", a, b, got, want)
		}
		if _, ok := jsonEqual(a, b, 0); ok {
			fast++
		}
		if want {
			equal++
		}
	}
	if fast < 35000 || equal < 10000 || equal > 40000 {
		t.Errorf("%d of 50,000 compared without reflection, %d equal: the cases do not exercise it", fast, equal)
	}
	// A decoded custom resource's spec takes the fast path.
	spec := map[string]any{"n": int64(1), "text": "x", "tags": []any{"a", "b"}, "f": 1.5, "ok": true, "none": nil}
	if eq, ok := jsonEqual(spec, runtime.DeepCopyJSONValue(spec), 0); !eq || !ok {
		t.Errorf("a spec and its copy: got equal %v, without reflection %v; want both", eq, ok)
	}
	if s := fmt.Sprint(jsonEqual(spec["tags"], []any{"a"}, 0)); s != "false true" {
		t.Errorf("lists of different lengths: got %s, want false true", s)
	}
}

// TestGenerationChangedWithoutReflection: comparing a decoded custom
// resource with its update (the spec changed or not) allocates nothing
// (equality.Semantic allocates per top-level field: its visited map and
// reflection).
func TestGenerationChangedWithoutReflection(t *testing.T) {
	_, old := benchThing(t)
	obj := old.DeepCopy()
	for _, change := range []bool{false, true} {
		if change {
			obj.Object["spec"].(map[string]any)["n"] = int64(2)
		}
		var changed bool
		if allocs := testing.AllocsPerRun(100, func() { changed = (Strategy{}).GenerationChanged(nil, obj, old) }); allocs != 0 {
			t.Errorf("spec changed %v: %.0f allocations, want none", change, allocs)
		}
		if changed != change {
			t.Errorf("GenerationChanged: got %v, want %v", changed, change)
		}
	}
}

func BenchmarkGenerationChanged(b *testing.B) {
	_, old := benchThing(b)
	obj := old.DeepCopy()
	b.ReportAllocs()
	for b.Loop() {
		(Strategy{}).GenerationChanged(nil, obj, old)
	}
}
