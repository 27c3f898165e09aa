package generic

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
)

// TestUnstructuredTimestampsAsTyped: for random pairs of custom resources
// — managed fields entries of every shape the typed decoding accepts or
// refuses (unknown keys, values of other types, times that do or do not
// parse or name one instant two ways, fieldsV1 with numbers, nil and empty
// objects and lists, invalid UTF-8), and rests that differ in nil against
// empty, int64 against float64, missing keys — compareTimestamps gives the
// outcome compareTypedTimestamps (upstream's comparison) gives, and leaves
// the new object as it does. It also checks that the map-reading path
// answered for most pairs, so that it is what is being tested.
func TestUnstructuredTimestampsAsTyped(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 29))
	answered, outcomes := 0, map[string]int{}
	const pairs = 5000
	for i := range pairs {
		old := randomObject(rng)
		obj := mutateObject(rng, old)
		a1, a2 := deepCopyValue(obj).(map[string]any), deepCopyValue(old).(map[string]any)
		b1, b2 := deepCopyValue(obj).(map[string]any), deepCopyValue(old).(map[string]any)
		if _, ok := compareUnstructuredTimestamps(deepCopyValue(obj).(map[string]any), deepCopyValue(old).(map[string]any)); ok {
			answered++
		}
		got := compareTimestamps(&unstructured.Unstructured{Object: a1}, &unstructured.Unstructured{Object: a2})
		want := compareTypedTimestamps(&unstructured.Unstructured{Object: b1}, &unstructured.Unstructured{Object: b2})
		outcomes[want]++
		if got != want {
			t.Fatalf("pair %d: %q, typed comparison %q\nnew: %#v\nold: %#v", i, got, want, obj, old)
		}
		if !reflect.DeepEqual(a1, b1) {
			t.Fatalf("pair %d: new object afterwards\n%#v\ntyped comparison's\n%#v", i, a1, b1)
		}
	}
	t.Logf("outcomes %v; the map-reading path answered %d of %d", outcomes, answered, pairs)
	for _, o := range []string{metrics.TimestampsUnequalFast, metrics.TimestampsUnequalSlow, metrics.TimestampsEqual} {
		if outcomes[o] < pairs/50 {
			t.Errorf("outcome %q only %d times of %d: the generator does not cover it", o, outcomes[o], pairs)
		}
	}
	if answered < pairs/2 {
		t.Errorf("the map-reading path answered %d of %d pairs", answered, pairs)
	}
}

func pick[T any](rng *rand.Rand, xs ...T) T { return xs[rng.IntN(len(xs))] }

// The first three times and six fieldsV1 values decode; the others do
// not, or only as their JSON (numbers, invalid UTF-8). randomTime and
// randomFields pick a decodable one three times in four.
func randomTime(rng *rand.Rand) any {
	if rng.IntN(4) > 0 {
		return pick(rng, rawTimes[:3]...)
	}
	return pick(rng, rawTimes...)
}

func randomFields(rng *rand.Rand) any {
	if rng.IntN(4) > 0 {
		return pick(rng, rawFields[:4]...)()
	}
	return pick(rng, rawFields...)()
}

var (
	rawTimes  = []any{"2026-11-29T12:00:00Z", "2026-11-29T12:00:01Z", "2026-11-29T13:00:00+01:00", "", "yesterday", nil, int64(5)}
	rawFields = []func() any{
		func() any { return map[string]any{"f:spec": map[string]any{}} },
		func() any { return map[string]any{"f:spec": map[string]any{"f:a": map[string]any{}}} },
		func() any { return map[string]any{} },
		func() any { return map[string]any{"f:x": []any{}} },
		func() any { return map[string]any(nil) },
		func() any { return map[string]any{"f:x": int64(1)} },
		func() any { return map[string]any{"f:x": []any(nil)} },
		func() any { return map[string]any{"f:x": map[string]any(nil)} },
		func() any { return map[string]any{"f:\xff": map[string]any{}} },
		func() any { return map[string]any{"f:\xfe": map[string]any{}} },
		func() any { return "f:spec" },
	}
	rawRests = []func() any{
		func() any { return map[string]any{"a": int64(1)} },
		func() any { return map[string]any{"a": float64(1)} },
		func() any { return map[string]any{"a": int64(2)} },
		func() any { return map[string]any{} },
		func() any { return map[string]any(nil) },
		func() any { return nil },
		func() any { return map[string]any{"l": []any{}} },
		func() any { return map[string]any{"l": []any(nil)} },
		func() any { return map[string]any{"l": []any{"x", true, nil}} },
		func() any { return []any{int64(1)} },
	}
)

func randomEntry(rng *rand.Rand) any {
	if rng.IntN(40) == 0 {
		return "not an entry"
	}
	e := map[string]any{}
	for _, k := range []string{"manager", "operation", "apiVersion", "fieldsType", "subresource"} {
		if rng.IntN(4) > 0 {
			e[k] = pick(rng, "m", "n", "Update", "Apply", "v1", "FieldsV1", "", "status")
		}
	}
	if rng.IntN(40) == 0 {
		e["manager"] = int64(1)
	}
	if rng.IntN(5) > 0 {
		e["time"] = randomTime(rng)
	}
	if rng.IntN(5) > 0 {
		e["fieldsV1"] = randomFields(rng)
	}
	if rng.IntN(40) == 0 {
		e["extra"] = "x"
	}
	return e
}

func randomObject(rng *rand.Rand) map[string]any {
	md := map[string]any{"name": "w", "namespace": "ns"}
	switch rng.IntN(12) {
	case 0: // none
	case 1:
		md["managedFields"] = "not a list"
	default:
		mf := []any{}
		for range 1 + rng.IntN(2) {
			mf = append(mf, randomEntry(rng))
		}
		md["managedFields"] = mf
	}
	if rng.IntN(3) == 0 {
		md["labels"] = pick(rng, map[string]any{"a": "b"}, map[string]any{}, map[string]any(nil))
	}
	return map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": md, "spec": pick(rng, rawRests...)()}
}

// mutateObject returns a copy of old changed a little: mostly the times
// of its entries (the case the comparison is for), sometimes an entry's
// other fields, the entries' number, or the rest of the object.
func mutateObject(rng *rand.Rand, old map[string]any) map[string]any {
	obj := deepCopyValue(old).(map[string]any)
	md := obj["metadata"].(map[string]any)
	if mf, ok := md["managedFields"].([]any); ok {
		for _, e := range mf {
			e, ok := e.(map[string]any)
			if !ok {
				continue
			}
			if rng.IntN(3) > 0 {
				e["time"] = randomTime(rng)
			}
			if rng.IntN(8) == 0 {
				e["fieldsV1"] = randomFields(rng)
			}
			if rng.IntN(10) == 0 {
				e["manager"] = pick(rng, "m", "n")
			}
			if rng.IntN(20) == 0 {
				delete(e, "time")
			}
		}
		if rng.IntN(15) == 0 {
			md["managedFields"] = append(mf, randomEntry(rng))
		}
	}
	switch rng.IntN(6) {
	case 0:
		obj["spec"] = pick(rng, rawRests...)()
	case 1:
		md["labels"] = pick(rng, map[string]any{"a": "b"}, map[string]any{}, map[string]any(nil))
	case 2:
		delete(md, "labels")
	}
	return obj
}

// deepCopyValue copies JSON-like values, keeping nil maps and lists nil.
func deepCopyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return v
		}
		c := make(map[string]any, len(v))
		for k, x := range v {
			c[k] = deepCopyValue(x)
		}
		return c
	case []any:
		if v == nil {
			return v
		}
		c := make([]any, len(v))
		for i, x := range v {
			c[i] = deepCopyValue(x)
		}
		return c
	}
	return v
}
