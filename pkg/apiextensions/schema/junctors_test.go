package schema

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// TestJunctorsAsReference: CRDs whose allOf, anyOf, oneOf or not say
// what a value is, carry rules or mention metadata, and whose root
// junctors name fields the schema does not specify, are refused with
// the errors kube-apiserver v1.37.2 gave for each, in its order
// (testdata/junctors/README says how they were taken). Kapi accepted
// them all before session 25.
func TestJunctorsAsReference(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "junctors", "*.crd.yaml"))
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
			ref, err := os.ReadFile(filepath.Join("testdata", "junctors", name+".reference.txt"))
			if err != nil {
				t.Fatal(err)
			}
			want := referenceErrors(string(ref))
			var got []string
			for _, e := range ValidateSchemas(crd, nil) {
				got = append(got, e.Error())
			}
			if !slices.Equal(got, want) {
				t.Errorf("errors:\n%s\nwant the reference's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// referenceErrors returns the errors of kubectl's message for a refused
// create: after the colon for one error, one per "* " line for several.
func referenceErrors(msg string) []string {
	_, rest, _ := strings.Cut(strings.TrimSpace(msg), "is invalid: ")
	if !strings.HasPrefix(strings.TrimSpace(rest), "* ") {
		return []string{strings.TrimSpace(rest)}
	}
	var out []string
	for _, l := range strings.Split(rest, "\n") {
		if e, ok := strings.CutPrefix(strings.TrimSpace(l), "* "); ok {
			out = append(out, e)
		}
	}
	return out
}
