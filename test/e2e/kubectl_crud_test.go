package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

var kubectlNS atomic.Int64

// TestKubectlEveryday drives the everyday kubectl commands against both
// backends: every binary on memory, the newest on etcd.
func TestKubectlEveryday(t *testing.T) {
	binaries := kubectls(t)
	forEachBackend(t, func(t *testing.T, e *env) {
		bins := binaries
		if e.backend != "memory" {
			bins = binaries[len(binaries)-1:]
		}
		for _, kubectl := range bins {
			t.Run(filepath.Base(kubectl), func(t *testing.T) {
				t.Parallel()
				runKubectlEveryday(t, e, kubectl)
			})
		}
	})
}

func runKubectlEveryday(t *testing.T, e *env, kubectl string) {
	ns := fmt.Sprintf("kubectl-%d-%d", time.Now().UnixNano()%1e6, kubectlNS.Add(1))
	home := t.TempDir() // shared by the commands: one discovery cache
	run := func(args ...string) string {
		t.Helper()
		out, stderr, err := runKubectlHome(t, kubectl, e.srv.Kubeconfig, home, args...)
		if err != nil {
			t.Fatalf("kubectl %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, stderr)
		}
		return out
	}
	expect := func(out, want string, args ...string) {
		t.Helper()
		if !strings.Contains(out, want) {
			t.Errorf("kubectl %s: output lacks %q:\n%s", strings.Join(args, " "), want, out)
		}
	}
	steps := []struct {
		args []string
		want []string
		// check runs on the output, if any.
		check func(t *testing.T, out string)
	}{
		{args: []string{"create", "namespace", ns}, want: []string{"namespace/" + ns + " created"}},
		{args: []string{"get", "ns"}, check: func(t *testing.T, out string) {
			lines := strings.Split(out, "\n")
			if !regexp.MustCompile(`^NAME\s+STATUS\s+AGE$`).MatchString(lines[0]) {
				t.Errorf("get ns header %q, want NAME STATUS AGE", lines[0])
			}
			for _, name := range []string{"default", "kube-node-lease", "kube-public", "kube-system", ns} {
				if !regexp.MustCompile(`(?m)^` + name + `\s+Active\s+\d+[smhd]`).MatchString(out) {
					t.Errorf("get ns lacks an Active row for %s:\n%s", name, out)
				}
			}
		}},
		{args: []string{"create", "configmap", "c1", "-n", ns, "--from-literal=a=1", "--from-literal=b=2"}, want: []string{"configmap/c1 created"}},
		{args: []string{"create", "secret", "generic", "s1", "-n", ns, "--from-literal=p=secret"}, want: []string{"secret/s1 created"}},
		{args: []string{"get", "cm", "c1", "-n", ns, "-o", "yaml"}, check: func(t *testing.T, out string) {
			var cm corev1.ConfigMap
			if err := yaml.UnmarshalStrict([]byte(out), &cm); err != nil {
				t.Fatalf("decode %s: %v", out, err)
			}
			if cm.Kind != "ConfigMap" || cm.APIVersion != "v1" || cm.Name != "c1" || cm.Namespace != ns || fmt.Sprint(cm.Data) != "map[a:1 b:2]" || cm.UID == "" {
				t.Errorf("get -o yaml: got %+v", cm)
			}
		}},
		{args: []string{"get", "cm", "-n", ns}, check: func(t *testing.T, out string) {
			if !regexp.MustCompile(`^NAME\s+DATA\s+AGE\n`).MatchString(out) || !regexp.MustCompile(`(?m)^c1\s+2\s+\d+s$`).MatchString(out) {
				t.Errorf("get cm: got\n%s\nwant a NAME DATA AGE table with c1 2", out)
			}
		}},
		{args: []string{"get", "secrets", "-n", ns}, check: func(t *testing.T, out string) {
			if !regexp.MustCompile(`(?m)^s1\s+Opaque\s+1\s+\d+s$`).MatchString(out) {
				t.Errorf("get secrets: got\n%s\nwant s1 Opaque 1", out)
			}
		}},
		{args: []string{"apply", "-n", ns, "-f", writeManifest(t, "c2", "x: one")}, want: []string{"configmap/c2 created"}},
		{args: []string{"apply", "-n", ns, "-f", writeManifest(t, "c2", "x: two")}, want: []string{"configmap/c2 configured"}},
		{args: []string{"get", "cm", "c2", "-n", ns, "-o", "jsonpath={.data.x} {.metadata.annotations.kubectl\\.kubernetes\\.io/last-applied-configuration}"}, check: func(t *testing.T, out string) {
			if !strings.HasPrefix(out, "two {") || !strings.Contains(out, `"x":"two"`) {
				t.Errorf("after apply: got %q, want data x=two and the last-applied annotation", out)
			}
		}},
		{args: []string{"patch", "cm", "c1", "-n", ns, "-p", `{"data":{"s":"strategic"}}`}, want: []string{"configmap/c1 patched"}},
		{args: []string{"patch", "cm", "c1", "-n", ns, "--type=merge", "-p", `{"data":{"m":"merge"}}`}, want: []string{"configmap/c1 patched"}},
		{args: []string{"patch", "cm", "c1", "-n", ns, "--type=json", "-p", `[{"op":"remove","path":"/data/a"}]`}, want: []string{"configmap/c1 patched"}},
		{args: []string{"get", "cm", "c1", "-n", ns, "-o", "jsonpath={.data}"}, want: []string{`{"b":"2","m":"merge","s":"strategic"}`}},
		{args: []string{"label", "cm", "c1", "-n", ns, "tier=web"}, want: []string{"configmap/c1 labeled"}},
		{args: []string{"get", "cm", "-n", ns, "-l", "tier=web", "-o", "name"}, check: func(t *testing.T, out string) {
			if out != "configmap/c1\n" {
				t.Errorf("get -l tier=web -o name: got %q, want configmap/c1", out)
			}
		}},
		{args: []string{"api-resources"}, check: func(t *testing.T, out string) {
			for _, re := range []string{
				`(?m)^configmaps\s+cm\s+v1\s+true\s+ConfigMap$`,
				`(?m)^namespaces\s+ns\s+v1\s+false\s+Namespace$`,
				`(?m)^secrets\s+v1\s+true\s+Secret$`,
				`(?m)^serviceaccounts\s+sa\s+v1\s+true\s+ServiceAccount$`,
				`(?m)^events\s+ev\s+v1\s+true\s+Event$`,
				`(?m)^events\s+ev\s+events.k8s.io/v1\s+true\s+Event$`,
				`(?m)^leases\s+coordination.k8s.io/v1\s+true\s+Lease$`,
			} {
				if !regexp.MustCompile(re).MatchString(out) {
					t.Errorf("api-resources lacks a line matching %s:\n%s", re, out)
				}
			}
		}},
		{args: []string{"explain", "configmap.data"}, check: func(t *testing.T, out string) {
			for _, re := range []string{`KIND:\s+ConfigMap`, `VERSION:\s+v1`, `FIELD:\s+data\s+<map\[string\]string>`, `Data contains the configuration data`} {
				if !regexp.MustCompile(re).MatchString(out) {
					t.Errorf("explain configmap.data lacks %s:\n%s", re, out)
				}
			}
		}},
		{args: []string{"delete", "cm", "c2", "-n", ns}, want: []string{`configmap "c2" deleted`}},
		{args: []string{"delete", "cm", "-n", ns, "--all"}, want: []string{`configmap "c1" deleted`}},
	}
	for _, s := range steps {
		out := run(s.args...)
		for _, w := range s.want {
			expect(out, w, s.args...)
		}
		if s.check != nil {
			s.check(t, out)
		}
		if t.Failed() {
			return
		}
	}

	testKubectlWatch(t, kubectl, e.srv.Kubeconfig, home, ns)

	out := run("delete", "namespace", ns, "--wait", "--timeout=30s")
	expect(out, `namespace "`+ns+`" deleted`, "delete namespace")
	_, stderr, err := runKubectlHome(t, kubectl, e.srv.Kubeconfig, home, "get", "namespace", ns)
	if err == nil || !strings.Contains(stderr, `Error from server (NotFound): namespaces "`+ns+`" not found`) {
		t.Errorf("get the deleted namespace: got %v %q, want NotFound", err, stderr)
	}
}

// testKubectlWatch runs `kubectl get cm --watch-only -o name` while a
// configmap is created and deleted, and reads both events.
func testKubectlWatch(t *testing.T, kubectl, kubeconfig, home, ns string) {
	t.Helper()
	lines, ctx := kubectlLines(t, kubectl, kubeconfig, home, "get", "cm", "-n", ns, "--watch-only", "--output-watch-events", "-o", "custom-columns=EVENT:.type,NAME:.object.metadata.name,DATA:.object.data.k", "--no-headers")
	// The watch starts asynchronously: keep changing w until kubectl
	// shows a change.
	run := func(args ...string) {
		t.Helper()
		if out, stderr, err := runKubectlHome(t, kubectl, kubeconfig, home, args...); err != nil {
			t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
		}
	}
	run("create", "configmap", "w", "-n", ns, "--from-literal=k=0")
	for i := 1; ; i++ {
		run("patch", "cm", "w", "-n", ns, "--type=merge", "-p", fmt.Sprintf(`{"data":{"k":"%d"}}`, i))
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("kubectl get --watch ended")
			}
			// ADDED if kubectl's watch started before the create.
			if !strings.HasPrefix(line, "MODIFIED w ") && !strings.HasPrefix(line, "ADDED w ") {
				t.Fatalf("kubectl get --watch printed %q, want MODIFIED w <k>", line)
			}
		case <-time.After(500 * time.Millisecond):
			if ctx.Err() != nil {
				t.Fatal("kubectl get --watch printed nothing within 30s")
			}
			continue
		}
		break
	}
	run("delete", "cm", "w", "-n", ns)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("kubectl get --watch ended before showing the deletion")
			}
			if strings.HasPrefix(line, "MODIFIED w ") {
				continue // a later patch
			}
			if !strings.HasPrefix(line, "DELETED w ") {
				t.Fatalf("kubectl get --watch printed %q, want DELETED w <k>", line)
			}
			return
		case <-ctx.Done():
			t.Fatal("kubectl get --watch did not show the deletion within 30s")
		}
	}
}

func writeManifest(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name+".yaml")
	body := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  " + data + "\n"
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// runKubectlHome is runKubectl with a given HOME (a discovery cache shared
// by the commands of one test).
func runKubectlHome(t *testing.T, kubectl, kubeconfig, home string, args ...string) (string, string, error) {
	t.Helper()
	warmOpenAPI(t, kubeconfig)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "HOME="+home)
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}
