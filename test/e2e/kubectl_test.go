package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kapi-dev/kapi/kapitest"
)

// kubectls returns the kubectl binaries to test with: the one on PATH and
// the versioned ones of the Cloud SDK. Without any, the test is skipped,
// except under CI=true, where it fails.
func kubectls(t *testing.T) []string {
	t.Helper()
	var out []string
	if p, err := exec.LookPath("kubectl"); err == nil {
		out = append(out, p)
	}
	matches, _ := filepath.Glob("/usr/lib/google-cloud-sdk/bin/kubectl.1.*")
	for _, want := range []string{"kubectl.1.27", "kubectl.1.33"} {
		for _, m := range matches {
			if filepath.Base(m) == want {
				out = append(out, m)
			}
		}
	}
	if len(out) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("kubectl is required under CI=true but none was found on PATH or in /usr/lib/google-cloud-sdk/bin")
		}
		t.Skip("kubectl not found on PATH or in /usr/lib/google-cloud-sdk/bin; install kubectl to run this test")
	}
	return out
}

// kubectlPair returns kubectl 1.27 and 1.33 (the Cloud SDK's); a
// missing one fails under CI=true and is skipped otherwise.
func kubectlPair(t *testing.T) []string {
	t.Helper()
	found := kubectls(t)
	var out []string
	for _, want := range []string{"kubectl.1.27", "kubectl.1.33"} {
		i := slices.IndexFunc(found, func(p string) bool { return filepath.Base(p) == want })
		switch {
		case i >= 0:
			out = append(out, found[i])
		case os.Getenv("CI") == "true":
			t.Fatalf("%s is required under CI=true but is not in /usr/lib/google-cloud-sdk/bin", want)
		default:
			t.Logf("%s is not in /usr/lib/google-cloud-sdk/bin: not tested", want)
		}
	}
	if len(out) == 0 {
		t.Skip("neither kubectl.1.27 nor kubectl.1.33 is in /usr/lib/google-cloud-sdk/bin")
	}
	return out
}

// openAPIWarmed holds, per kubeconfig, the once of warmOpenAPI.
var openAPIWarmed sync.Map // kubeconfig path -> *sync.Once

// warmOpenAPI asks the server of kubeconfig for its OpenAPI documents once
// per kubeconfig, before its first kubectl. The first /openapi/v2 in
// protobuf (what kubectl 1.27's apply and explain fetch) builds the
// document and its protobuf form: about 5 s of CPU under the race detector
// (JSON, then gnostic's YAML parse, as upstream's handler does), which
// took 20.7 s at load 19 on the 2-core CI machine, against kubectl's 32 s
// request timeout. The documents are cached after that (a CRD change
// rebuilds a part, ~1 s). The warm-up only prepares: what it gets is
// logged, and the kubectl commands that follow are the test (a user's
// kubeconfig may not be allowed to read /openapi).
func warmOpenAPI(t *testing.T, kubeconfig string) {
	t.Helper()
	once, _ := openAPIWarmed.LoadOrStore(kubeconfig, &sync.Once{})
	once.(*sync.Once).Do(func() {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			t.Logf("warm the OpenAPI documents: %v", err)
			return
		}
		client, err := rest.HTTPClientFor(cfg)
		if err != nil {
			t.Logf("warm the OpenAPI documents: %v", err)
			return
		}
		for _, get := range []struct{ path, accept string }{
			{"/openapi/v2", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"},
			{"/openapi/v3", "application/json"},
		} {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			begin := time.Now()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+get.path, nil)
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			req.Header.Set("Accept", get.accept)
			resp, err := client.Do(req)
			if err != nil {
				cancel()
				t.Logf("warm %s: %v", get.path, err)
				return
			}
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			cancel()
			t.Logf("warm %s: %d in %s (%v)", get.path, resp.StatusCode, time.Since(begin).Round(time.Millisecond), err)
		}
	})
}

func runKubectl(t *testing.T, kubectl, kubeconfig string, args ...string) (string, string, error) {
	t.Helper()
	warmOpenAPI(t, kubeconfig)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir()) // no cache from other runs
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// kubectlLines starts a long-running kubectl (a watch) with HOME set to
// home ("" for a fresh one) and returns the lines it prints, fields joined
// by one space, and the context bounding it (30 s). kubectl is killed and
// reaped when the test ends; the channel closes when its output ends.
func kubectlLines(t *testing.T, kubectl, kubeconfig, home string, args ...string) (<-chan string, context.Context) {
	t.Helper()
	warmOpenAPI(t, kubeconfig)
	if home == "" {
		home = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+home)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	lines := make(chan string)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- strings.Join(strings.Fields(sc.Text()), " "):
			case <-ctx.Done():
				return
			}
		}
	}()
	t.Cleanup(func() {
		cancel() // kills kubectl: the reader sees EOF
		<-readerDone
		_ = cmd.Wait()
	})
	return lines, ctx
}

// watchLines runs a kubectl watch and calls steps with a wait function
// that blocks until kubectl prints a line starting with prefix (fields
// joined by one space), failing after 30 s.
func watchLines(t *testing.T, kubectl, kubeconfig string, args []string, steps func(wait func(prefix string))) {
	t.Helper()
	lines, ctx := kubectlLines(t, kubectl, kubeconfig, "", args...)
	var seen []string
	steps(func(prefix string) {
		t.Helper()
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("kubectl %s ended; printed %q, want a line starting %q", strings.Join(args, " "), seen, prefix)
				}
				seen = append(seen, line)
				if strings.HasPrefix(line, prefix) {
					return
				}
			case <-ctx.Done():
				t.Fatalf("kubectl %s printed %q, want a line starting %q", strings.Join(args, " "), seen, prefix)
			}
		}
	})
}

func TestKubectlRawHealthAndVersion(t *testing.T) {
	binaries := kubectls(t)
	srv := kapitest.Start(t)
	for _, kubectl := range binaries {
		t.Run(filepath.Base(kubectl), func(t *testing.T) {
			out, stderr, err := runKubectl(t, kubectl, srv.Kubeconfig, "get", "--raw", "/readyz?verbose")
			if err != nil {
				t.Fatalf("get --raw /readyz?verbose: %v\n%s", err, stderr)
			}
			for _, line := range []string{"[+]ping ok", "[+]log ok", "[+]shutdown ok", "readyz check passed"} {
				if !strings.Contains(out, line+"\n") {
					t.Fatalf("readyz output lacks %q:\n%s", line, out)
				}
			}
			out, stderr, err = runKubectl(t, kubectl, srv.Kubeconfig, "get", "--raw", "/version")
			if err != nil {
				t.Fatalf("get --raw /version: %v\n%s", err, stderr)
			}
			var v version.Info
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("decode /version %q: %v", out, err)
			}
			if v.Major != "1" || v.Minor != "37" || !strings.HasPrefix(v.GitVersion, "v1.37.") {
				t.Fatalf("got version %+v, want Kubernetes 1.37", v)
			}
			out, stderr, err = runKubectl(t, kubectl, srv.Kubeconfig, "version", "-o", "json")
			if err != nil {
				t.Fatalf("kubectl version: %v\n%s", err, stderr)
			}
			if !strings.Contains(out, `"serverVersion"`) || !strings.Contains(out, v.GitVersion) {
				t.Fatalf("kubectl version does not show the server version %s:\n%s", v.GitVersion, out)
			}
		})
	}
}
