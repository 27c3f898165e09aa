package crdtest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// CompareWithReference runs validate on each NAME.crd.yaml of dir and
// compares the errors' texts, in order, with those of NAME.reference.txt:
// what kubectl printed when the CRD was created on kube-apiserver (the
// dir's README says which, when and how). A CRD the reference created
// must give no error.
func CompareWithReference(t *testing.T, dir string, validate func(*apiextensionsv1.CustomResourceDefinition) []string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.crd.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test CRDs in %s (%v)", dir, err)
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
			ref, err := os.ReadFile(filepath.Join(dir, name+".reference.txt"))
			if err != nil {
				t.Fatal(err)
			}
			want := kubectlErrors(string(ref))
			if got := validate(crd); !slices.Equal(got, want) {
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
