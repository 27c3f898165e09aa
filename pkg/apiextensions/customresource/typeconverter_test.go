package customresource

import (
	"log/slog"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

func TestCRTypeConverterFallsBack(t *testing.T) {
	crd := crdtest.ApplyCRD()
	// Not structural: an array without items.
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["bad"] = apiextensionsv1.JSONSchemaProps{Type: "array"}
	if _, err := BuildTypeConverter(crd, nil); err == nil {
		t.Fatal("got no error for an array without items, want one")
	}
}

// NewTypeConverter builds its types on first use: from the schema when it
// converts (an undeclared field is refused), deduced otherwise (anything
// goes).
func TestNewTypeConverterOnFirstUse(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apply.example.com/v1", "kind": "Applier",
		"metadata": map[string]any{"name": "a"},
		"spec":     map[string]any{"replicas": int64(1), "undeclared": "x"},
	}}
	logger := slog.New(slog.DiscardHandler)
	if _, err := NewTypeConverter(crdtest.ApplyCRD(), nil, logger).ObjectToTyped(obj); err == nil || !strings.Contains(err.Error(), "undeclared") {
		t.Fatalf("schema types: got %v, want an error naming the undeclared field", err)
	}
	bad := crdtest.ApplyCRD()
	bad.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["bad"] = apiextensionsv1.JSONSchemaProps{Type: "array"}
	tc := NewTypeConverter(bad, nil, logger)
	bad.Spec.Versions[0].Schema = nil // NewTypeConverter keeps its own copy
	v, err := tc.ObjectToTyped(obj)
	if err != nil {
		t.Fatalf("deduced types: %v", err)
	}
	back, err := tc.TypedToObject(v)
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(back.(*unstructured.Unstructured).Object, "spec", "undeclared"); got != "x" {
		t.Fatalf("round trip through deduced types: got %v", back)
	}
}
