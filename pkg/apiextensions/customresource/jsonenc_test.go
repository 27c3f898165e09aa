package customresource

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// randomJSONString mixes plain text with every kind of character
// encoding/json escapes.
func randomJSONString(r *rand.Rand) string {
	pieces := []string{"a", "Zz09", " ", "<", ">", "&", `"`, `\`, "\b", "\f", "\n", "\r", "\t", "\x00", "\x01", "\x1f", "\x7f",
		"é", "世界", "😀", "\u2028", "\u2029", "\xff", "\xe2\x80", "\xed\xa0\x80", "\ufffd", "/", "'"}
	var b strings.Builder
	for range r.IntN(8) {
		if r.IntN(4) == 0 {
			b.WriteByte(byte(r.IntN(256)))
		} else {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
	}
	return b.String()
}

func randomJSONFloat(r *rand.Rand) float64 {
	fixed := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1.5, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 9.999e20, 123456789.125,
		math.MaxFloat64, math.SmallestNonzeroFloat64, 1e-300, 2.5e-9, float64(math.MaxInt64), -3.25e22}
	if r.IntN(2) == 0 {
		return fixed[r.IntN(len(fixed))]
	}
	return math.Float64frombits(r.Uint64())
}

func randomJSONValue(r *rand.Rand, depth int) any {
	k := r.IntN(11)
	if depth > 4 && k >= 8 {
		k = r.IntN(8)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return int64(r.Uint64())
	case 3:
		f := randomJSONFloat(r)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return 0.5
		}
		return f
	case 4, 5:
		return randomJSONString(r)
	case 6:
		return r.IntN(1000) - 500 // int, as code-built objects may hold
	case 7:
		return []string{"typed", "<slice>"} // handed to encoding/json
	case 8:
		l := make([]any, r.IntN(4))
		for i := range l {
			l[i] = randomJSONValue(r, depth+1)
		}
		return l
	default:
		m := make(map[string]any, 4)
		for range r.IntN(5) {
			m[randomJSONString(r)] = randomJSONValue(r, depth+1)
		}
		return m
	}
}

// TestAppendJSONMatchesEncodingJSON: the reflection-free encoding of
// unstructured content writes exactly what encoding/json writes (and
// what unstructured.UnstructuredJSONScheme writes for an object with that
// content), on random objects and on edge cases.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := []any{
		map[string]any{}, map[string]any(nil), []any{}, []any(nil), nil, "", int64(math.MinInt64), int64(math.MaxInt64),
		map[string]any{"b": 1.0, "a": []any{map[string]any{"z": nil, "y": "<x>"}}, "A": false, "": "\u2028"},
		int8(-3), uint64(math.MaxUint64), float32(0.1), json.Number("12"), map[string]string{"k": "<v>"},
	}
	for range 3000 {
		m := make(map[string]any)
		for range r.IntN(6) {
			m[randomJSONString(r)] = randomJSONValue(r, 0)
		}
		cases = append(cases, m)
	}
	for i, c := range cases {
		want, werr := json.Marshal(c)
		got, gerr := appendJSONValue(nil, c, 0)
		if (werr != nil) != (gerr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("case %d (%#v):\n got %q, %v\nwant %q, %v", i, c, got, gerr, want, werr)
		}
		if m, ok := c.(map[string]any); ok {
			var scheme, ours bytes.Buffer
			if err := unstructured.UnstructuredJSONScheme.Encode(&unstructured.Unstructured{Object: m}, &scheme); err != nil {
				t.Fatal(err)
			}
			if err := writeUnstructuredJSON(&ours, m, true); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ours.Bytes(), scheme.Bytes()) {
				t.Fatalf("case %d: writeUnstructuredJSON %q, UnstructuredJSONScheme %q", i, ours.Bytes(), scheme.Bytes())
			}
		}
	}
}

// TestAppendJSONErrors: values encoding/json refuses are refused with its
// errors.
func TestAppendJSONErrors(t *testing.T) {
	for _, v := range []any{math.NaN(), math.Inf(1), math.Inf(-1), map[string]any{"a": []any{math.NaN()}}, map[string]any{"c": make(chan int)}} {
		_, werr := json.Marshal(v)
		_, gerr := appendJSONValue(nil, v, 0)
		if werr == nil || gerr == nil || gerr.Error() != werr.Error() {
			t.Errorf("%v: got error %v, want %v", v, gerr, werr)
		}
	}
}

// TestAppendJSONDeep: very deep content is handed to encoding/json past
// maxJSONDepth and still matches it.
func TestAppendJSONDeep(t *testing.T) {
	var v any = "leaf"
	for range 3 * maxJSONDepth {
		v = map[string]any{"x": []any{v}}
	}
	want, werr := json.Marshal(v)
	got, gerr := appendJSONValue(nil, v, 0)
	if werr != nil || gerr != nil || !bytes.Equal(got, want) {
		t.Fatalf("deep: errors %v / %v, equal %v", gerr, werr, bytes.Equal(got, want))
	}
}

func BenchmarkUnstructuredJSON(b *testing.B) {
	obj := encodeTestObjects()[0].Object
	b.Run("UnstructuredJSONScheme", func(b *testing.B) {
		u := &unstructured.Unstructured{Object: obj}
		b.ReportAllocs()
		for b.Loop() {
			var buf bytes.Buffer
			_ = unstructured.UnstructuredJSONScheme.Encode(u, &buf)
		}
	})
	b.Run("writeUnstructuredJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var buf bytes.Buffer
			_ = writeUnstructuredJSON(&buf, obj, true)
		}
	})
}
