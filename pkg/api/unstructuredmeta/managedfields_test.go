package unstructuredmeta

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapi-dev/kapi/pkg/api/unstructuredmeta/metatest"
)

func TestManagedFields(t *testing.T) {
	for name, mf := range metatest.ManagedFieldsCases() {
		t.Run(name, func(t *testing.T) {
			u := metatest.Object(mf)
			want := u.GetManagedFields()
			if got := ManagedFields(u); (want == nil) != (got == nil) || !reflect.DeepEqual(got, want) {
				t.Fatalf("ManagedFields = %#v, GetManagedFields = %#v", got, want)
			}
			got := ManagedFieldsForValidation(u)
			if (want == nil) != (got == nil) || len(want) != len(got) {
				t.Fatalf("ManagedFieldsForValidation = %#v, GetManagedFields = %#v", got, want)
			}
			for i := range want {
				w, g := want[i], got[i]
				w.FieldsV1, g.FieldsV1 = nil, nil
				if !reflect.DeepEqual(w, g) {
					t.Errorf("entry %d: %#v, GetManagedFields: %#v", i, g, w)
				}
			}
			for _, withFields := range []bool{false, true} {
				if _, fast := unstructuredManagedFields(u.Object, withFields); fast != fastCase(name) {
					t.Errorf("fast path taken (fieldsV1 %v): %v, want %v", withFields, fast, fastCase(name))
				}
			}
		})
	}
}

// fastCase tells whether managedFieldsCases' case takes the fast path.
func fastCase(name string) bool {
	switch name {
	case "bad time", "time number", "time null", "time string null", "manager number", "manager null",
		"operation bool", "fieldsV1 NaN", "fieldsV1 chan", "item not a map", "not a list", "null", "fieldsV1 deep nested":
		return false
	}
	return true
}

// TestManagedFieldsRandom compares the fast paths with
// GetManagedFields over random entries built from values of every kind.
func TestManagedFieldsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	values := []any{nil, "", "Update", "Apply", "FieldsV1", "status", "2026-11-27T03:00:00Z", "2026-11-27T03:00:00.5+01:00",
		"x", int64(3), 1.5, true, map[string]any{}, map[string]any{"f:a": map[string]any{}}, []any{"a"}, math.Inf(1)}
	keys := []string{"manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource", "other"}
	for i := range 5000 {
		var items []any
		for range r.IntN(3) {
			e := map[string]any{}
			for _, k := range keys {
				if r.IntN(3) > 0 {
					e[k] = values[r.IntN(len(values))]
				}
			}
			items = append(items, e)
		}
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "a", "managedFields": items}}}
		want := u.GetManagedFields()
		if got := ManagedFields(u); (want == nil) != (got == nil) || !reflect.DeepEqual(want, got) {
			t.Fatalf("case %d %v: ManagedFields = %#v, GetManagedFields = %#v", i, items, got, want)
		}
		got := ManagedFieldsForValidation(u)
		for j := range want {
			want[j].FieldsV1 = nil
		}
		for j := range got {
			got[j].FieldsV1 = nil
		}
		if (want == nil) != (got == nil) || !reflect.DeepEqual(want, got) {
			t.Fatalf("case %d %v: ManagedFieldsForValidation = %#v, GetManagedFields = %#v", i, items, got, want)
		}
	}
}

func BenchmarkManagedFields(b *testing.B) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "a", "managedFields": metatest.ManagedFieldsCases()["written"]},
	}}
	b.Run("GetManagedFields", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			u.GetManagedFields()
		}
	})
	b.Run("ManagedFields", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ManagedFields(u)
		}
	})
	b.Run("ManagedFieldsForValidation", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ManagedFieldsForValidation(u)
		}
	})
}

// TestAppendFields: the direct encoding of fieldsV1 is json.Marshal's,
// over random objects of objects with keys encoding/json escapes.
func TestAppendFields(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	keys := []string{"f:a", "f:spec", ".", "", `k:{"name":"x","port":80}`, `v:"<&>"`, "back\\slash", "é", "\u2028", "\x01", "\xff", "~", "f:b c"}
	var gen func(depth int) map[string]any
	gen = func(depth int) map[string]any {
		m := map[string]any{}
		if depth > 4 {
			return m
		}
		for range r.IntN(4) {
			m[keys[r.IntN(len(keys))]] = gen(depth + 1)
		}
		return m
	}
	for i := range 3000 {
		v := gen(0)
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendFields(nil, v, 0)
		if !ok || string(got) != string(want) {
			t.Fatalf("%d: appendFields = %q, %v; json.Marshal = %q", i, got, ok, want)
		}
		u := metatest.Object([]any{map[string]any{"manager": "m", "operation": "Update", "fieldsV1": v}})
		if g, w := ManagedFields(u), u.GetManagedFields(); !reflect.DeepEqual(g, w) {
			t.Fatalf("%d: ManagedFields = %#v, GetManagedFields = %#v", i, g, w)
		}
	}
	for _, v := range []any{map[string]any{"f:a": "x"}, map[string]any{"f:a": []any{}}, map[string]any(nil), "x", nil, map[string]any{"f:a": map[string]any{"f:b": int64(1)}}} {
		if _, ok := appendFields(nil, v, 0); ok {
			t.Errorf("appendFields(%#v) encoded it", v)
		}
	}
}
