package schema

import (
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

// TestJunctorsAsReference: CRDs whose allOf, anyOf, oneOf or not say
// what a value is, carry rules or mention metadata, and whose root
// junctors name fields the schema does not specify, are refused with
// the errors kube-apiserver v1.37.2 gave for each, in its order
// (testdata/junctors/README says how they were taken). Kapi accepted
// them all before session 25.
func TestJunctorsAsReference(t *testing.T) {
	crdtest.CompareWithReference(t, filepath.Join("testdata", "junctors"), func(crd *apiextensionsv1.CustomResourceDefinition) []string {
		var got []string
		for _, e := range ValidateSchemas(crd, nil) {
			got = append(got, e.Error())
		}
		return got
	})
}
