package apiextensions

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestSubpackageDependencies keeps the seams of the split: package cel
// must stay reusable outside the CRD server (admission policies), so it
// may use package schema but no other kapi code (no serving, storage or
// server packages); package schema uses no kapi code at all.
func TestSubpackageDependencies(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the go command is needed to list dependencies: %v", err)
		}
		t.Skipf("the go command is needed to list dependencies: %v", err)
	}
	const module = "github.com/kapi-dev/kapi/"
	for _, tc := range []struct {
		pkg     string
		allowed []string // kapi packages it may depend on, itself included
	}{
		{pkg: "./cel", allowed: []string{"pkg/apiextensions/cel", "pkg/apiextensions/schema"}},
		{pkg: "./schema", allowed: []string{"pkg/apiextensions/schema"}},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", tc.pkg).Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v", tc.pkg, err)
			}
			var got []string
			for _, dep := range strings.Fields(string(out)) {
				rel, ok := strings.CutPrefix(dep, module)
				if !ok {
					continue
				}
				allowed := false
				for _, a := range tc.allowed {
					allowed = allowed || rel == a
				}
				if !allowed {
					got = append(got, dep)
				}
			}
			if len(got) > 0 {
				t.Errorf("%s depends on %q, want only %q of kapi", tc.pkg, got, tc.allowed)
			}
		})
	}
}
