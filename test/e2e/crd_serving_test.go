package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const dialCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: dials.e2e.kapi.dev
spec:
  group: e2e.kapi.dev
  names: {kind: Dial, listKind: DialList, plural: dials, singular: dial}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .status.selector}
    selectableFields:
    - jsonPath: .spec.color
    additionalPrinterColumns:
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Color, type: string, jsonPath: .spec.color}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer}
              color: {type: string}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer}
          status:
            type: object
            properties:
              replicas: {type: integer}
              selector: {type: string}
`

// Server-side apply, scale, field selectors, explain from OpenAPI v2 and
// get -w on a custom resource with real kubectl (1.27 and 1.33).
func TestKubectlCustomResourceServing(t *testing.T) {
	binaries := kubectls(t)
	forEachBackend(t, func(t *testing.T, e *env) {
		for _, kubectl := range binaries {
			if !strings.Contains(kubectl, "1.27") && !strings.Contains(kubectl, "1.33") {
				continue
			}
			t.Run(filepath.Base(kubectl), func(t *testing.T) {
				kc := e.srv.Kubeconfig
				dir := t.TempDir()
				write := func(name, data string) string {
					t.Helper()
					p := filepath.Join(dir, name)
					if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
						t.Fatal(err)
					}
					return p
				}
				run := func(args ...string) string {
					t.Helper()
					out, stderr, err := runKubectl(t, kubectl, kc, args...)
					if err != nil {
						t.Fatalf("kubectl %v: %v\n%s%s", args, err, out, stderr)
					}
					return out
				}
				run("apply", "--server-side", "-f", write("crd.yaml", dialCRD))
				waitCRDEstablished(t, kubectl, kc, "crd/dials.e2e.kapi.dev")
				ns := e.newNamespace(t)

				// Server-side apply: create, then a second manager merges
				// a list-map entry, then conflicts on replicas.
				run("-n", ns, "apply", "--server-side", "--field-manager=alice", "-f",
					write("a.yaml", "apiVersion: e2e.kapi.dev/v1\nkind: Dial\nmetadata: {name: d1}\nspec: {replicas: 1, color: blue, ports: [{name: http, port: 80}]}\n"))
				run("-n", ns, "apply", "--server-side", "--field-manager=bob", "-f",
					write("b.yaml", "apiVersion: e2e.kapi.dev/v1\nkind: Dial\nmetadata: {name: d1}\nspec: {ports: [{name: https, port: 443}]}\n"))
				if out := run("-n", ns, "get", "dial", "d1", "-o", "jsonpath={.spec.ports[*].name}"); out != "http https" {
					t.Fatalf("ports after two appliers: got %q, want %q", out, "http https")
				}
				conflict := write("c.yaml", "apiVersion: e2e.kapi.dev/v1\nkind: Dial\nmetadata: {name: d1}\nspec: {replicas: 2}\n")
				if out, stderr, err := runKubectl(t, kubectl, kc, "-n", ns, "apply", "--server-side", "--field-manager=bob", "-f", conflict); err == nil ||
					!strings.Contains(stderr, `conflict with "alice"`) || !strings.Contains(stderr, ".spec.replicas") {
					t.Fatalf("conflicting apply: got %v\n%s%s, want a conflict with alice on .spec.replicas", err, out, stderr)
				}
				run("-n", ns, "apply", "--server-side", "--force-conflicts", "--field-manager=bob", "-f", conflict)
				if out := run("-n", ns, "get", "dial", "d1", "-o", "jsonpath={.spec.replicas}"); out != "2" {
					t.Fatalf("replicas after forced apply: got %q, want 2", out)
				}
				if out := run("-n", ns, "get", "dial", "d1", "--show-managed-fields", "-o", "yaml"); !strings.Contains(out, "manager: alice") || !strings.Contains(out, "manager: bob") {
					t.Fatalf("managedFields lack alice and bob:\n%s", out)
				}

				// Scale.
				gen := run("-n", ns, "get", "dial", "d1", "-o", "jsonpath={.metadata.generation}")
				if out := run("-n", ns, "scale", "--replicas=3", "dial/d1"); !strings.Contains(out, "scaled") {
					t.Fatalf("kubectl scale: %s", out)
				}
				g, _ := strconv.Atoi(gen)
				if out, want := run("-n", ns, "get", "dial", "d1", "-o", "jsonpath={.spec.replicas} {.metadata.generation}"), fmt.Sprintf("3 %d", g+1); out != want {
					t.Fatalf("replicas and generation after scale: got %q, want %q", out, want)
				}
				if out := run("-n", ns, "get", "--raw", "/apis/e2e.kapi.dev/v1/namespaces/"+ns+"/dials/d1/scale"); !strings.Contains(out, `"replicas":3`) {
					t.Fatalf("scale subresource: %s", out)
				}

				// Field selectors on selectableFields.
				run("-n", ns, "apply", "--server-side", "--field-manager=alice", "-f",
					write("d2.yaml", "apiVersion: e2e.kapi.dev/v1\nkind: Dial\nmetadata: {name: d2}\nspec: {replicas: 1, color: red}\n"))
				if out := run("-n", ns, "get", "dials", "--field-selector", "spec.color=blue", "-o", "name"); strings.TrimSpace(out) != "dial.e2e.kapi.dev/d1" {
					t.Fatalf("dials with spec.color=blue: got %q, want d1 only", out)
				}
				if out, stderr, err := runKubectl(t, kubectl, kc, "-n", ns, "get", "dials", "--field-selector", "spec.nope=x"); err == nil ||
					!strings.Contains(stderr, "field label not supported: spec.nope") {
					t.Fatalf("unknown field selector: got %v\n%s%s, want field label not supported", err, out, stderr)
				}

				// explain from the OpenAPI v2 document.
				if out := run("explain", "dial.spec.ports", "--output=plaintext-openapiv2"); !strings.Contains(out, "KIND:") || !strings.Contains(out, "Dial") ||
					!strings.Contains(out, "port") {
					t.Fatalf("explain from OpenAPI v2:\n%s", out)
				}

				// get -w prints the printer columns, then each change.
				watchDials(t, kubectl, kc, ns, func() { run("-n", ns, "scale", "--replicas=4", "dial/d1") })
			})
		}
	})
}

// watchDials runs `kubectl get dials -w`, waits for its header and d1's
// row (replicas 3, blue), calls change, and waits for d1's row with 4
// replicas.
func watchDials(t *testing.T, kubectl, kubeconfig, ns string, change func()) {
	t.Helper()
	watchLines(t, kubectl, kubeconfig, []string{"-n", ns, "get", "dials", "-w"}, func(wait func(string)) {
		wait("NAME REPLICAS COLOR")
		wait("d1 3 blue")
		change()
		wait("d1 4 blue")
	})
}

// waitCRDEstablished runs kubectl wait for crd's Established condition,
// again while it fails at once: kubectl 1.27's wait errors out while
// status.conditions is still null, as it does against kube-apiserver.
func waitCRDEstablished(t *testing.T, kubectl, kubeconfig, crd string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, stderr, err := runKubectl(t, kubectl, kubeconfig, "wait", "--for", "condition=established", crd, "--timeout=20s")
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl wait: %v\n%s%s", err, out, stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
