package customresource

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

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
