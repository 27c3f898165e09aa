package podsecurity

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/internal/testaudit"
	"github.com/kapi-dev/kapi/kapitest"
)

const kubectl133 = "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"

// kubectl returns kubectl 1.33: missing, the test is skipped, except under
// CI=true where it fails.
func kubectl(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(kubectl133); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required under CI=true: %v", kubectl133, err)
		}
		t.Skipf("%s not found; install the Cloud SDK's kubectl 1.33 to run this test", kubectl133)
	}
	return kubectl133
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPodSecurityKubectl drives the plugin with kubectl 1.33 on a server
// whose PodSecurityConfiguration exempts a namespace: kubectl prints the
// warnings, the enforce denial, the warnings for existing pods when a
// namespace's enforce level is raised and invalid label values; the audit
// log holds the annotations. Expected texts are upstream's
// (k8s.io/pod-security-admission admission/admission.go and
// policy/check_*.go, kubernetes v1.37).
func TestPodSecurityKubectl(t *testing.T) {
	bin := kubectl(t)
	dir := t.TempDir()
	cfg := writeFile(t, dir, "admission.yaml", `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults:
      audit: restricted
    exemptions:
      namespaces: [exempt]
`)
	auditLog := filepath.Join(dir, "audit.log")
	srv := kapitest.Start(t, kapitest.WithFlags("--admission-control-config-file="+cfg, "--audit-log-path="+auditLog, "--audit-policy-file="+testaudit.MetadataPolicy(t)))
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := context.Background()
	for _, ns := range []string{"psa", "exempt"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no default service account in %s: %v", ns, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	home := t.TempDir()
	run := func(args ...string) (string, error) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(c, bin, append([]string{"--kubeconfig", srv.Kubeconfig}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.Env = append(os.Environ(), "HOME="+home)
		err := cmd.Run()
		return stderr.String(), err
	}
	manifest := func(ns, name string, privileged bool) string {
		return writeFile(t, dir, ns+"-"+name+".yaml", fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  containers:\n  - name: c\n    image: busybox\n    securityContext:\n      privileged: %t\n", name, ns, privileged))
	}
	restrictedDetail := `allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ` +
		`unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ` +
		`runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ` +
		`seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`

	if stderr, err := run("label", "ns", "psa", "pod-security.kubernetes.io/warn=restricted"); err != nil {
		t.Fatalf("label warn: %v: %s", err, stderr)
	}
	stderr, err := run("apply", "-f", manifest("psa", "p", true))
	if err != nil {
		t.Fatalf("apply p: %v: %s", err, stderr)
	}
	want := `Warning: would violate PodSecurity "restricted:latest": privileged (container "c" must not set securityContext.privileged=true), ` + restrictedDetail
	if !strings.Contains(stderr, want) {
		t.Errorf("apply warning\n got %s\nwant %s", stderr, want)
	}

	stderr, err = run("label", "ns", "psa", "pod-security.kubernetes.io/enforce=baseline")
	if err != nil {
		t.Fatalf("label enforce: %v: %s", err, stderr)
	}
	for _, w := range []string{
		`Warning: existing pods in namespace "psa" violate the new PodSecurity enforce level "baseline:latest"`,
		"Warning: p: privileged\n",
	} {
		if !strings.Contains(stderr, w) {
			t.Errorf("label enforce: missing %q in\n%s", w, stderr)
		}
	}

	stderr, err = run("apply", "-f", manifest("psa", "q", true))
	wantErr := `pods "q" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)`
	if err == nil || !strings.Contains(stderr, wantErr) {
		t.Errorf("apply q: err %v, stderr\n%s\nwant %s", err, stderr, wantErr)
	}
	if stderr, err := run("apply", "-f", manifest("psa", "r", false)); err != nil || !strings.Contains(stderr, `Warning: would violate PodSecurity "restricted:latest": `+restrictedDetail) {
		t.Errorf("apply r: %v: %s", err, stderr)
	}

	stderr, err = run("label", "ns", "psa", "--overwrite", "pod-security.kubernetes.io/enforce=bogus")
	if err == nil || !strings.Contains(stderr, `metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "bogus": must be one of privileged, baseline, restricted`) {
		t.Errorf("invalid label: %v: %s", err, stderr)
	}

	stderr, err = run("create", "deployment", "d", "-n", "psa", "--image=busybox")
	// kubectl create deployment names the container after the image.
	if err != nil || !strings.Contains(stderr, `Warning: would violate PodSecurity "restricted:latest": `+strings.ReplaceAll(restrictedDetail, `"c"`, `"busybox"`)) {
		t.Errorf("create deployment: %v: %s", err, stderr)
	}

	// The exempt namespace: labels do not apply, and kubectl shows upstream's
	// exemptNamespaceWarning (admission.go; example in the v1.25 release
	// blog, https://kubernetes.io/blog/2022/08/25/pod-security-admission-stable/).
	if stderr, err := run("label", "ns", "exempt", "pod-security.kubernetes.io/enforce=restricted"); err != nil ||
		!strings.Contains(stderr, `Warning: namespace "exempt" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored`) {
		t.Fatalf("label exempt: %v: %s", err, stderr)
	}
	if stderr, err := run("apply", "-f", manifest("exempt", "p", true)); err != nil || strings.Contains(stderr, "Warning") {
		t.Errorf("exempt namespace: %v: %s", err, stderr)
	}

	// Audit annotations, in the log (Metadata level for every request).
	wantAudit := []string{
		`"pod-security.kubernetes.io/audit-violations":"would violate PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false`,
		`"pod-security.kubernetes.io/enforce-policy":"baseline:latest"`,
		`"pod-security.kubernetes.io/exempt":"namespace"`,
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		data, _ := os.ReadFile(auditLog)
		var missing []string
		for _, w := range wantAudit {
			if !strings.Contains(string(data), w) {
				missing = append(missing, w)
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit log lacks %q", missing)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
