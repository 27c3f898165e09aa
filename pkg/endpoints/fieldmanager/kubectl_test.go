package fieldmanager_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kapi-dev/kapi/kapitest"
)

// kubectls are the kubectl binaries to test with: the one at
// /usr/bin/kubectl and 1.27 of the Cloud SDK. A missing one is skipped,
// except under CI=true, where it fails the test.
func kubectls(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, p := range []string{"/usr/bin/kubectl", "/usr/lib/google-cloud-sdk/bin/kubectl.1.27"} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is required under CI=true: %v", p, err)
			}
			t.Logf("skipping %s: %v", p, err)
			continue
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		t.Skip("no kubectl binary found")
	}
	return out
}

type kubectl struct {
	bin, kubeconfig, home string
}

func (k kubectl) run(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.bin, append([]string{"--kubeconfig", k.kubeconfig}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "HOME="+k.home)
	err := cmd.Run()
	return out.String(), err
}

func (k kubectl) mustRun(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, err := k.run(t, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (k kubectl) configMap(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	out := k.mustRun(t, "", "-n", ns, "get", "configmap", name, "-o", "json", "--show-managed-fields")
	cm := &corev1.ConfigMap{}
	if err := json.Unmarshal([]byte(out), cm); err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
	return cm
}

func configMapYAML(name string, data map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n", name)
	for _, k := range []string{"x", "y"} {
		if v, ok := data[k]; ok {
			fmt.Fprintf(&b, "  %q: %q\n", k, v) // "y" unquoted is YAML 1.1 for true
		}
	}
	return b.String()
}

func TestKubectlServerSideApply(t *testing.T) {
	t.Parallel()
	binaries := kubectls(t)
	srv := kapitest.Start(t)
	for i, bin := range binaries {
		t.Run(filepath.Base(bin), func(t *testing.T) {
			k := kubectl{bin: bin, kubeconfig: srv.Kubeconfig, home: t.TempDir()}
			ns := fmt.Sprintf("kubectl-ssa-%d", i)
			k.mustRun(t, "", "create", "namespace", ns)

			out := k.mustRun(t, configMapYAML("app", map[string]string{"x": "1"}), "-n", ns, "apply", "--server-side", "-f", "-")
			if !strings.Contains(out, "configmap/app serverside-applied") {
				t.Fatalf("got %q, want configmap/app serverside-applied", out)
			}
			out = k.mustRun(t, configMapYAML("app", map[string]string{"x": "2", "y": "1"}), "-n", ns, "apply", "--server-side", "-f", "-")
			if !strings.Contains(out, "configmap/app serverside-applied") {
				t.Fatalf("got %q on re-apply, want configmap/app serverside-applied", out)
			}
			cm := k.configMap(t, ns, "app")
			if cm.Data["x"] != "2" || cm.Data["y"] != "1" || len(cm.ManagedFields) != 1 || cm.ManagedFields[0].Manager != "kubectl" {
				t.Fatalf("got data %v managedFields %+v, want x=2 y=1 applied by kubectl", cm.Data, cm.ManagedFields)
			}

			// A client-side edit takes x; applying another x conflicts.
			k.mustRun(t, "", "-n", ns, "patch", "configmap", "app", "--type", "merge", "-p", `{"data":{"x":"edited"}}`)
			out, err := k.run(t, configMapYAML("app", map[string]string{"x": "3", "y": "1"}), "-n", ns, "apply", "--server-side", "-f", "-")
			if err == nil {
				t.Fatalf("got success applying over an edit, want a conflict:\n%s", out)
			}
			for _, want := range []string{`Apply failed with 1 conflict: conflict with "kubectl-patch"`, ".data.x", "--force-conflicts"} {
				if !strings.Contains(out, want) {
					t.Fatalf("got %q, want it to contain %q", out, want)
				}
			}
			out = k.mustRun(t, configMapYAML("app", map[string]string{"x": "3", "y": "1"}), "-n", ns, "apply", "--server-side", "--force-conflicts", "-f", "-")
			if !strings.Contains(out, "configmap/app serverside-applied") {
				t.Fatalf("got %q with --force-conflicts, want configmap/app serverside-applied", out)
			}
			cm = k.configMap(t, ns, "app")
			if cm.Data["x"] != "3" {
				t.Fatalf("got data %v, want x=3 after --force-conflicts", cm.Data)
			}
			for _, e := range cm.ManagedFields {
				if e.Manager == "kubectl-patch" && strings.Contains(string(e.FieldsV1.Raw), `"f:x"`) {
					t.Fatalf("got %+v, want kubectl-patch to have lost data.x", e)
				}
			}

			// Upgrading a client-side applied object is free of conflicts.
			k.mustRun(t, configMapYAML("csa", map[string]string{"x": "1"}), "-n", ns, "apply", "-f", "-")
			cm = k.configMap(t, ns, "csa")
			if len(cm.ManagedFields) != 1 || cm.ManagedFields[0].Manager != "kubectl-client-side-apply" {
				t.Fatalf("got managedFields %+v, want kubectl-client-side-apply's", cm.ManagedFields)
			}
			k.mustRun(t, configMapYAML("csa", map[string]string{"x": "2"}), "-n", ns, "apply", "--server-side", "-f", "-")
			if cm = k.configMap(t, ns, "csa"); cm.Data["x"] != "2" {
				t.Fatalf("got data %v, want x=2", cm.Data)
			}

			// Dry run on the server changes nothing.
			k.mustRun(t, configMapYAML("app", map[string]string{"x": "4", "y": "1"}), "-n", ns, "apply", "--server-side", "--dry-run=server", "-f", "-")
			if cm = k.configMap(t, ns, "app"); cm.Data["x"] != "3" {
				t.Fatalf("got data %v after --dry-run=server, want x=3", cm.Data)
			}
		})
	}
}
