package schema

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// BenchmarkPruneAndDefault prunes and defaults a custom resource of
// ~400 bytes (kapi-bench's objects: metadata with managedFields, a spec
// of three fields) as every decode from storage and every write does:
// "preserve" against kapi-bench's schema (type object,
// x-kubernetes-preserve-unknown-fields, no properties), "properties"
// against testSchema. Allocations per op are the figure to watch: a
// property lookup copied a JSONSchemaProps to the heap for every field,
// found or not.
//
//	go test -run '^$' -bench BenchmarkPruneAndDefault -benchmem ./pkg/apiextensions/schema/
func BenchmarkPruneAndDefault(b *testing.B) {
	obj := map[string]any{
		"apiVersion": "bench.kapi.dev/v1", "kind": "BenchThing",
		"metadata": map[string]any{"name": "t00001", "namespace": "bench", "uid": "5c3c2d3e-1f0a-4d0e-9a53-3b2f6f8c1e11",
			"resourceVersion": "12345", "generation": int64(1), "creationTimestamp": "2026-11-26T23:00:00Z",
			"managedFields": []any{map[string]any{"manager": "kapi-bench", "operation": "Update", "apiVersion": "bench.kapi.dev/v1",
				"time": "2026-11-26T23:00:00Z", "fieldsType": "FieldsV1",
				"fieldsV1": map[string]any{"f:spec": map[string]any{".": map[string]any{}, "f:n": map[string]any{}, "f:tags": map[string]any{}, "f:text": map[string]any{}}}}}},
		"spec": map[string]any{"n": int64(7),
			"text": "a custom resource of a few hundred bytes, as a small controller's objects are; padding padding padding padding padding",
			"tags": []any{"a", "b", "c"}},
	}
	for _, c := range []struct {
		name string
		s    *apiextensionsv1.JSONSchemaProps
	}{
		{"preserve", &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}},
		{"properties", testSchema()},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				o := runtime.DeepCopyJSON(obj)
				Prune(o, c.s)
				ApplyDefaults(o, c.s)
			}
		})
	}
}
