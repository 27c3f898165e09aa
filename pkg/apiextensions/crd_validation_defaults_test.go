package apiextensions

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
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
	files, err := filepath.Glob(filepath.Join("testdata", "celdefaults", "*.crd.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test CRDs (%v)", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".crd.yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.UnmarshalStrict(data, crd); err != nil {
				t.Fatal(err)
			}
			// What the API's defaulting and create strategy fill in.
			crd.Spec.Names.ListKind = crd.Spec.Names.Kind + "List"
			crd.Status.StoredVersions = []string{crd.Spec.Versions[0].Name}
			ref, err := os.ReadFile(filepath.Join("testdata", "celdefaults", name+".reference.txt"))
			if err != nil {
				t.Fatal(err)
			}
			want := kubectlErrors(string(ref))
			var got []string
			for _, e := range validateCRD(crd, nil) {
				got = append(got, e.Error())
			}
			if !slices.Equal(got, want) {
				t.Errorf("errors:\n%s\nwant the reference's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// kubectlErrors returns the errors of kubectl's output for a create:
// none when it was created, else after "is invalid: " for one error and
// one per "* " line for several.
func kubectlErrors(out string) []string {
	_, rest, found := strings.Cut(strings.TrimSpace(out), "is invalid: ")
	if !found {
		return nil
	}
	if !strings.HasPrefix(strings.TrimSpace(rest), "* ") {
		return []string{strings.TrimSpace(rest)}
	}
	var errs []string
	for _, l := range strings.Split(rest, "\n") {
		if e, ok := strings.CutPrefix(strings.TrimSpace(l), "* "); ok {
			errs = append(errs, e)
		}
	}
	return errs
}
