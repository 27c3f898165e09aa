package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// knownMissing are lines of testdata/api-resources-v1.37.txt kapi does not
// serve yet, with why; they are reported, not failed. A line served while
// still listed here fails the test, so the list shrinks as work lands.
var knownMissing = map[string]string{}

// TestKubectlAPIResourcesComplete compares `kubectl api-resources` on kapi
// (kubectl 1.27 and 1.33) with the list kube-apiserver v1.37 prints for its
// default (stable) API: nothing extra, nothing missing but knownMissing.
func TestKubectlAPIResourcesComplete(t *testing.T) {
	binaries := kubectlPair(t)
	raw, err := os.ReadFile("testdata/api-resources-v1.37.txt")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(string(raw), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			want = append(want, l)
		}
	}
	slices.Sort(want)
	forEachBackend(t, func(t *testing.T, e *env) {
		for _, bin := range binaries {
			t.Run(filepath.Base(bin), func(t *testing.T) {
				k := newKC(t, e, bin)
				// Custom resources other tests made on the shared server
				// are not kube-apiserver's: leave their groups out.
				crdGroups := strings.Fields(k.ok(t, "get", "crd", "-o", `jsonpath={range .items[*]}{.spec.group}{" "}{end}`))
				var got []string
				for _, l := range strings.Split(k.ok(t, "api-resources", "--no-headers"), "\n") {
					f := strings.Fields(l)
					if len(f) < 4 {
						continue
					}
					group, _, _ := strings.Cut(f[len(f)-3], "/")
					if slices.Contains(crdGroups, group) {
						continue
					}
					got = append(got, strings.Join(f, " "))
				}
				slices.Sort(got)
				for _, w := range want {
					served := slices.Contains(got, w)
					switch why, known := knownMissing[w]; {
					case served && known:
						t.Errorf("%q is served now: remove it from knownMissing", w)
					case !served && known:
						t.Logf("not served yet: %q (%s)", w, why)
					case !served:
						t.Errorf("missing: %q", w)
					}
				}
				for _, g := range got {
					if !slices.Contains(want, g) {
						t.Errorf("extra (not in kube-apiserver v1.37's list): %q", g)
					}
				}
			})
		}
	})
}
