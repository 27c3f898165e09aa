package discovery

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// kubectls are the kubectl binaries tested against; missing ones are
// skipped unless CI=true.
var kubectls = []struct{ name, path string }{
	{"default", "/usr/bin/kubectl"},
	{"1.27", "/usr/lib/google-cloud-sdk/bin/kubectl.1.27"},
	{"1.33", "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"},
}

func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kapi
  cluster:
    server: %s
contexts:
- name: kapi
  context:
    cluster: kapi
    user: kapi
current-context: kapi
users:
- name: kapi
  user: {}
`, server)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestKubectlAPIResources runs `kubectl api-resources` and `kubectl
// api-versions` against the chain, with aggregated discovery served and
// not; the output must be the same either way, and as kube-apiserver's
// (golden files).
func TestKubectlAPIResources(t *testing.T) {
	for _, k := range kubectls {
		t.Run(k.name, func(t *testing.T) {
			if _, err := os.Stat(k.path); err != nil {
				if os.Getenv("CI") == "true" {
					t.Fatalf("kubectl %s: %v", k.name, err)
				}
				t.Skipf("kubectl %s: %v", k.name, err)
			}
			for _, mode := range []struct {
				name string
				cfg  Config
			}{
				{"aggregated", Config{}},
				{"aggregated-v2beta1", Config{ServeV2Beta1: true}},
				{"legacy", Config{DisableAggregated: true}},
			} {
				t.Run(mode.name, func(t *testing.T) {
					c := newChain(t, mode.cfg, allFixtures()...)
					var log requestLog
					srv := httptest.NewServer(log.wrap(c.head.Handler()))
					t.Cleanup(srv.Close)
					kubeconfig := writeKubeconfig(t, srv.URL)
					for _, args := range [][]string{{"api-resources"}, {"api-versions"}} {
						out := runKubectl(t, k.path, kubeconfig, args...)
						compareGolden(t, filepath.Join("testdata", "kubectl-"+args[0]+".golden"), out)
					}
					t.Logf("requests: %v", log.paths())
				})
			}
		})
	}
}

func runKubectl(t *testing.T, bin, kubeconfig string, args ...string) []byte {
	t.Helper()
	home := t.TempDir()
	all := append([]string{"--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(home, "cache"), "--request-timeout", "20s"}, args...)
	cmd := exec.Command(bin, all...)
	cmd.Env = append(os.Environ(), "HOME="+home, "KUBECONFIG="+kubeconfig)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("kubectl %s: %v\nstderr: %s", strings.Join(args, " "), err, stderr.String())
		}
	case <-time.After(45 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("kubectl %s timed out; stderr: %s", strings.Join(args, " "), stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("kubectl %s stderr: %s", strings.Join(args, " "), stderr.String())
	}
	return stdout.Bytes()
}
