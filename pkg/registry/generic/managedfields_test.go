package generic

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// managedFieldsCases are metadata.managedFields values of unstructured
// objects: what the field manager writes, what a client may send, and
// what GetManagedFields fails to convert.
func managedFieldsCases() map[string]any {
	fields := map[string]any{"f:spec": map[string]any{"f:n": map[string]any{}, "f:tags": map[string]any{}}, "f:x": []any{int64(1), 2.5, true, nil, "s"}}
	entry := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	written := entry("manager", "kapi-bench", "operation", "Update", "apiVersion", "bench.kapi.dev/v1",
		"time", "2026-11-27T03:00:00Z", "fieldsType", "FieldsV1", "fieldsV1", fields)
	return map[string]any{
		"written":              []any{written},
		"two":                  []any{written, entry("manager", "m2", "operation", "Apply", "apiVersion", "v1", "time", "2026-11-27T03:00:01+02:00", "fieldsType", "FieldsV1", "fieldsV1", map[string]any{}, "subresource", "status")},
		"empty list":           []any{},
		"empty entry":          []any{map[string]any{}},
		"bad operation":        []any{entry("manager", "m", "operation", "Patch")},
		"no operation":         []any{entry("manager", "m")},
		"bad fieldsType":       []any{entry("manager", "m", "operation", "Update", "fieldsType", "FieldsV2")},
		"long manager":         []any{entry("manager", fmt.Sprintf("%0200d", 1), "operation", "Update")},
		"long subresource":     []any{entry("manager", "m", "operation", "Update", "subresource", fmt.Sprintf("%0300d", 1))},
		"unknown key":          []any{entry("manager", "m", "operation", "Update", "Manager", 5, "extra", map[string]any{"a": "b"})},
		"bad time":             []any{entry("manager", "m", "operation", "Patch", "time", "yesterday")},
		"time number":          []any{entry("manager", "m", "operation", "Patch", "time", int64(5))},
		"time null":            []any{entry("manager", "m", "operation", "Patch", "time", nil)},
		"time string null":     []any{entry("manager", "m", "operation", "Patch", "time", "null")},
		"manager number":       []any{entry("manager", int64(5), "operation", "Patch")},
		"manager null":         []any{entry("manager", nil, "operation", "Patch")},
		"operation bool":       []any{entry("manager", "m", "operation", true)},
		"fieldsV1 string":      []any{entry("manager", "m", "operation", "Patch", "fieldsV1", "x")},
		"fieldsV1 null":        []any{entry("manager", "m", "operation", "Patch", "fieldsV1", nil)},
		"fieldsV1 NaN":         []any{entry("manager", "m", "operation", "Patch", "fieldsV1", map[string]any{"a": math.NaN()})},
		"fieldsV1 chan":        []any{entry("manager", "m", "operation", "Patch", "fieldsV1", map[string]any{"a": make(chan int)})},
		"item not a map":       []any{written, "x"},
		"not a list":           map[string]any{"manager": "m"},
		"null":                 nil,
		"fieldsV1 deep nested": []any{entry("manager", "m", "operation", "Patch", "fieldsV1", nested(150))},
	}
}

func nested(n int) any {
	var v any = map[string]any{}
	for range n {
		v = map[string]any{"f:a": v}
	}
	return v
}

// validateMeta runs the update's metadata validation of u, as beforeUpdate
// does, on meta.
func validateMeta(meta, old metav1.Object) field.ErrorList {
	path := field.NewPath("metadata")
	errs := validation.ValidateObjectMetaAccessor(meta, true, validation.NameIsDNSSubdomain, path)
	return append(errs, validation.ValidateObjectMetaAccessorUpdate(meta, old, path)...)
}

func TestManagedFieldsForValidation(t *testing.T) {
	for name, mf := range managedFieldsCases() {
		t.Run(name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "bench.kapi.dev/v1", "kind": "BenchThing",
				"metadata": map[string]any{"name": "a", "namespace": "ns", "resourceVersion": "5", "managedFields": mf},
			}}
			old := &unstructured.Unstructured{Object: map[string]any{
				"metadata": map[string]any{"name": "a", "namespace": "ns", "resourceVersion": "5"},
			}}
			want := u.GetManagedFields()
			got := managedFieldsForValidation(u)
			if (want == nil) != (got == nil) || len(want) != len(got) {
				t.Fatalf("managedFieldsForValidation = %#v, GetManagedFields = %#v", got, want)
			}
			for i := range want {
				w, g := want[i], got[i]
				w.FieldsV1, g.FieldsV1 = nil, nil
				if !reflect.DeepEqual(w, g) {
					t.Errorf("entry %d: %#v, GetManagedFields: %#v", i, g, w)
				}
			}
			vm := &validationMeta{Object: u}
			if g, w := validateMeta(vm, old), validateMeta(u, old); !reflect.DeepEqual(g, w) {
				t.Errorf("validation with validationMeta: %v; without: %v", g, w)
			}
			if _, fast := unstructuredManagedFields(u.Object); fast != fastCase(name) {
				t.Errorf("fast path taken: %v, want %v", fast, fastCase(name))
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

// TestManagedFieldsForValidationRandom compares the fast path with
// GetManagedFields over random entries built from values of every kind.
func TestManagedFieldsForValidationRandom(t *testing.T) {
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
		got := managedFieldsForValidation(u)
		for j := range want {
			want[j].FieldsV1 = nil
		}
		for j := range got {
			got[j].FieldsV1 = nil
		}
		if (want == nil) != (got == nil) || !reflect.DeepEqual(want, got) {
			t.Fatalf("case %d %v: managedFieldsForValidation = %#v, GetManagedFields = %#v", i, items, got, want)
		}
	}
}

func TestValidationMetaReadsOnce(t *testing.T) {
	u := &unstructured.Unstructured{}
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate}})
	vm := &validationMeta{Object: u}
	first := vm.GetManagedFields()
	u.SetManagedFields(nil)
	if second := vm.GetManagedFields(); len(second) != 1 || &first[0] != &second[0] {
		t.Fatalf("second read %v, want the first's %v", second, first)
	}
}

func BenchmarkValidateMetaUpdate(b *testing.B) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "bench.kapi.dev/v1", "kind": "BenchThing",
		"metadata": map[string]any{"name": "a", "namespace": "ns", "resourceVersion": "5", "managedFields": managedFieldsCases()["written"]},
	}}
	old := u.DeepCopy()
	b.Run("GetManagedFields", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			validateMeta(u, old)
		}
	})
	b.Run("validationMeta", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			validateMeta(&validationMeta{Object: u}, old)
		}
	})
}
