package customresource

import (
	"log/slog"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/openapi"
)

// benchThing is kapi-bench's custom resource (cmd/kapi-bench rows.go):
// a x-kubernetes-preserve-unknown-fields schema, ~400 bytes.
func benchThing(tb testing.TB) (*apiextensionsv1.CustomResourceDefinition, *unstructured.Unstructured) {
	tb.Helper()
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "benchthings.bench.kapi.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "bench.kapi.dev",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "benchthings", Singular: "benchthing", Kind: "BenchThing", ListKind: "BenchThingList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}}}},
		},
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "bench.kapi.dev/v1", "kind": "BenchThing",
		"metadata": map[string]any{"name": "t00001", "namespace": "bench", "uid": "6b1e2c4e-0000-4000-8000-000000000001",
			"resourceVersion": "1000", "generation": int64(1), "creationTimestamp": "2026-11-28T00:00:00Z"},
		"spec": map[string]any{"n": int64(0),
			"text": "a custom resource of a few hundred bytes, as a small controller's objects are; padding padding padding padding padding",
			"tags": []any{"a", "b", "c"}},
	}}
	return crd, u
}

// The field manager's part of kapi-bench's update row: a custom resource
// whose spec.n the client increments, sending back the managedFields it
// was given.
func BenchmarkFieldManagerUpdateCR(b *testing.B) {
	crd, created := benchThing(b)
	meta, err := MetaSchemas(openapi.Default())
	if err != nil {
		b.Fatal(err)
	}
	kind := schema.GroupVersionKind{Group: "bench.kapi.dev", Version: "v1", Kind: "BenchThing"}
	m, err := FieldManagers(map[schema.GroupVersionKind]FieldManagement{kind: {
		TypeConverter: NewTypeConverter(crd, meta, slog.New(slog.DiscardHandler)), Defaulter: NewDefaulter(crd)}})(kind, "", nil)
	if err != nil {
		b.Fatal(err)
	}
	empty := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "bench.kapi.dev/v1", "kind": "BenchThing"}}
	live := m.UpdateNoErrors(empty, created.DeepCopy(), "kapi-bench").(*unstructured.Unstructured)
	next := live.DeepCopy()
	_ = unstructured.SetNestedField(next.Object, int64(1), "spec", "n")
	live = m.UpdateNoErrors(live, next, "kapi-bench").(*unstructured.Unstructured)
	if n := len(live.GetManagedFields()); n != 1 {
		b.Fatalf("%d managedFields entries, want 1", n)
	}
	in := live.DeepCopy()
	_ = unstructured.SetNestedField(in.Object, int64(2), "spec", "n")
	b.ReportAllocs()
	for b.Loop() {
		m.UpdateNoErrors(live.DeepCopy(), in.DeepCopy(), "kapi-bench")
	}
}
