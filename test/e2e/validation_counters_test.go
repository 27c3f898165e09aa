package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestValidationCounters: the three counters of k8s.io/apiserver
// pkg/validation have the reference's HELP and TYPE lines and values
// (kube-apiserver v1.37.2, session 25, the same requests): the
// declarative validation mismatch and panic counters stay 0; an update
// refused with two identical errors (two rules of one node with the same
// message) counts one duplicate, a create refused the same way none
// (upstream counts in BeforeUpdate only).
func TestValidationCounters(t *testing.T) {
	srv := kapitest.Start(t)
	ctx := context.Background()
	lines := func(dups string) []string {
		return []string{
			"# HELP apiserver_validation_declarative_validation_mismatch_total [BETA] Number of times declarative validation results differed from handwritten validation results for core types.",
			"# TYPE apiserver_validation_declarative_validation_mismatch_total counter",
			"apiserver_validation_declarative_validation_mismatch_total 0",
			"# HELP apiserver_validation_declarative_validation_panic_total [BETA] Number of times declarative validation has panicked during validation.",
			"# TYPE apiserver_validation_declarative_validation_panic_total counter",
			"apiserver_validation_declarative_validation_panic_total 0",
			"# HELP apiserver_validation_duplicate_validation_error_total [INTERNAL] Number of duplicate validation errors during validation.",
			"# TYPE apiserver_validation_duplicate_validation_error_total counter",
			"apiserver_validation_duplicate_validation_error_total " + dups,
		}
	}
	expect := func(step, dups string) {
		t.Helper()
		text := metricsText(t, srv.Config)
		var got []string
		for _, f := range []string{"apiserver_validation_declarative_validation_mismatch_total", "apiserver_validation_declarative_validation_panic_total", "apiserver_validation_duplicate_validation_error_total"} {
			got = append(got, familyLines(text, f)...)
		}
		if want := lines(dups); !slices.Equal(got, want) {
			t.Fatalf("%s: got\n%q\nwant\n%q", step, got, want)
		}
	}
	expect("at start", "0")

	crds := apiextensionsclient.NewForConfigOrDie(srv.Config).ApiextensionsV1().CustomResourceDefinitions()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "dups.cel25.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "cel25.example.com",
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "dups", Singular: "dup", Kind: "Dup", ListKind: "DupList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {
							Type: "object",
							XValidations: []apiextensionsv1.ValidationRule{
								{Rule: "self.a > 0", Message: "bad"},
								{Rule: "self.b > 0", Message: "bad"},
							},
							Properties: map[string]apiextensionsv1.JSONSchemaProps{"a": {Type: "integer"}, "b": {Type: "integer"}},
						},
					},
				}},
			}},
		},
	}
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dups := dynamic.NewForConfigOrDie(srv.Config).Resource(schema.GroupVersionResource{Group: "cel25.example.com", Version: "v1", Resource: "dups"}).Namespace("default")
	obj := func(name string, v int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cel25.example.com/v1", "kind": "Dup",
			"metadata": map[string]any{"name": name},
			"spec":     map[string]any{"a": v, "b": v},
		}}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := dups.Create(ctx, obj("d", 1), metav1.CreateOptions{})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := dups.Create(ctx, obj("d2", -1), metav1.CreateOptions{}); err == nil {
		t.Fatal("invalid create accepted")
	}
	expect("create refused", "0")
	if _, err := dups.Patch(ctx, "d", types.MergePatchType, []byte(`{"spec":{"a":-1,"b":-1}}`), metav1.PatchOptions{}); err == nil {
		t.Fatal("invalid patch accepted")
	}
	expect("update refused", "1")
}
