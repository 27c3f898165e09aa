// Package metatest holds test cases of unstructured metadata for
// pkg/api/unstructuredmeta and its users' tests.
package metatest

import (
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Object is a custom resource (bench.kapi.dev/v1 BenchThing ns/a at
// resourceVersion 5) whose metadata.managedFields is managedFields, as the
// tests of the cases' users build it.
func Object(managedFields any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "bench.kapi.dev/v1", "kind": "BenchThing",
		"metadata": map[string]any{"name": "a", "namespace": "ns", "resourceVersion": "5", "managedFields": managedFields},
	}}
}

// ManagedFieldsCases are metadata.managedFields values of unstructured
// objects: what the field manager writes, what a client may send, and
// what GetManagedFields fails to convert.
func ManagedFieldsCases() map[string]any {
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
