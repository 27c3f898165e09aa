package apiextensions

import (
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

// TestCELDefaultsAsReference: a default is checked against the
// x-kubernetes-validations rules of its schema node and of the nodes
// below it, as kube-apiserver v1.37.2 checks it: refused with its errors
// (the rule's message, messageExpression or "failed rule"), transition
// rules comparing the default with itself, rules with optionalOldSelf
// seeing no old value; rules are not run on a default the schema already
// refuses. Expected: what the reference printed for each CRD
// (testdata/celdefaults/README). Before session 25 kapi created all of
// them.
func TestCELDefaultsAsReference(t *testing.T) {
	crdtest.CompareWithReference(t, filepath.Join("testdata", "celdefaults"), func(crd *apiextensionsv1.CustomResourceDefinition) []string {
		// What the API's defaulting and create strategy fill in.
		crd.Spec.Names.ListKind = crd.Spec.Names.Kind + "List"
		crd.Status.StoredVersions = []string{crd.Spec.Versions[0].Name}
		var got []string
		for _, e := range validateCRD(crd, nil) {
			got = append(got, e.Error())
		}
		return got
	})
}
