package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.e2e.kapi.dev
spec:
  group: e2e.kapi.dev
  names: {kind: Gizmo, listKind: GizmoList, plural: gizmos, singular: gizmo, shortNames: [gz]}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            description: What a gizmo should be.
            properties:
              size: {type: integer, minimum: 1}
`

// The CRD flow with real kubectl: apply a CRD, wait for Established, use
// its custom resources (printer columns, validation, explain,
// api-resources), delete the CRD.
func TestKubectlCustomResources(t *testing.T) {
	binaries := kubectls(t)
	forEachBackend(t, func(t *testing.T, e *env) {
		for _, kubectl := range binaries {
			if !strings.Contains(kubectl, "1.27") && !strings.Contains(kubectl, "1.33") {
				continue // issue 5 asks for 1.27 and 1.33
			}
			t.Run(filepath.Base(kubectl), func(t *testing.T) {
				kc := e.srv.Kubeconfig
				dir := t.TempDir()
				crd := filepath.Join(dir, "crd.yaml")
				if err := os.WriteFile(crd, []byte(widgetCRD), 0o600); err != nil {
					t.Fatal(err)
				}
				run := func(args ...string) string {
					t.Helper()
					out, stderr, err := runKubectl(t, kubectl, kc, args...)
					if err != nil {
						t.Fatalf("kubectl %v: %v\n%s%s", args, err, out, stderr)
					}
					return out
				}
				run("apply", "-f", crd)
				waitCRDEstablished(t, kubectl, kc, "crd/gizmos.e2e.kapi.dev")
				ns := e.newNamespace(t)
				cr := filepath.Join(dir, "cr.yaml")
				_ = os.WriteFile(cr, []byte("apiVersion: e2e.kapi.dev/v1\nkind: Gizmo\nmetadata: {name: g1}\nspec: {size: 3}\n"), 0o600)
				run("-n", ns, "apply", "-f", cr)
				if out := run("-n", ns, "get", "gz"); !strings.Contains(out, "SIZE") || !strings.Contains(out, "g1") || !strings.Contains(out, "3") {
					t.Fatalf("get gizmos lacks the printer column:\n%s", out)
				}
				bad := filepath.Join(dir, "bad.yaml")
				_ = os.WriteFile(bad, []byte("apiVersion: e2e.kapi.dev/v1\nkind: Gizmo\nmetadata: {name: g2}\nspec: {size: 0}\n"), 0o600)
				if out, stderr, err := runKubectl(t, kubectl, kc, "-n", ns, "apply", "-f", bad); err == nil ||
					!strings.Contains(stderr, "spec.size: Invalid value: 0") {
					t.Fatalf("invalid gizmo accepted or wrong error: %v\n%s%s", err, out, stderr)
				}
				if out := run("explain", "gizmo.spec"); !strings.Contains(out, "What a gizmo should be.") {
					t.Fatalf("explain gizmo.spec:\n%s", out)
				}
				if out := run("api-resources", "--api-group=e2e.kapi.dev"); !strings.Contains(out, "gizmos") || !strings.Contains(out, "gz") {
					t.Fatalf("api-resources:\n%s", out)
				}
				run("delete", "crd", "gizmos.e2e.kapi.dev", "--wait=true", "--timeout=30s")
				if _, stderr, err := runKubectl(t, kubectl, kc, "-n", ns, "get", "gizmos.e2e.kapi.dev"); err == nil ||
					!(strings.Contains(stderr, "the server doesn't have a resource type") || strings.Contains(stderr, "could not find the requested resource")) {
					t.Fatalf("gizmos still served after the CRD was deleted: %v %s", err, stderr)
				}
			})
		}
	})
}
