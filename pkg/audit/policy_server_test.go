package audit_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// goldenPolicy uses every level, rule- and policy-wide omitStages,
// omitManagedFields, users, verbs, namespaces, resources with
// resourceNames and subresource patterns, and nonResourceURLs.
const goldenPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: None
  users: ["system:apiserver"]
- level: Metadata
  nonResourceURLs: ["/version"]
- level: RequestResponse
  users: ["kubernetes-admin"]
  namespaces: ["audit"]
  resources:
  - group: ""
    resources: ["configmaps"]
- level: Request
  userGroups: ["system:masters"]
  verbs: ["create", "get"]
  resources:
  - group: ""
    resources: ["secrets"]
  omitManagedFields: true
- level: Metadata
  resources:
  - group: ""
    resources: ["namespaces"]
    resourceNames: ["audit"]
  - group: ""
    resources: ["namespaces/status"]
  omitStages: ["ResponseComplete"]
- level: Metadata
  resources:
  - group: ""
    resources: ["namespaces"]
- level: None
`

// TestPolicyGolden runs requests through a server with goldenPolicy and
// compares the events written for them with testdata/policy_golden.json
// (variable fields masked). What the file holds follows upstream's
// event-building code (k8s.io/apiserver pkg/audit/request.go: objectRef
// completed from the request object, requestObject at Request level and
// above, the raw patch as requestObject, responseObject at
// RequestResponse, a Status response's bounded fields as responseStatus;
// pkg/audit/policy/checker.go: first matching rule, policy omitStages
// merged into every rule; pkg/endpoints/filters/audit.go: stages) — see
// testdata/policy_golden.md.
func TestPolicyGolden(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte(goldenPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "audit.log")
	s := kapitest.Start(t, kapitest.WithFlags("--audit-log-path="+logPath, "--audit-policy-file="+policy))
	cfg := rest.CopyConfig(s.Config)
	cfg.UserAgent = "audit-golden"
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "audit"}}, metav1.CreateOptions{})
	must(err)
	_, err = cs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
	must(err)
	// The rule for "audit" omits ResponseComplete, the policy
	// RequestReceived: no event.
	_, err = cs.CoreV1().Namespaces().Get(ctx, "audit", metav1.GetOptions{})
	must(err)
	_, err = cs.CoreV1().ConfigMaps("audit").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{})
	must(err)
	_, err = cs.CoreV1().ConfigMaps("audit").Patch(ctx, "cm", types.MergePatchType, []byte(`{"data":{"b":"2"}}`), metav1.PatchOptions{})
	must(err)
	_, err = cs.CoreV1().ConfigMaps("audit").Get(ctx, "missing", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("get missing: %v", err)
	}
	_, err = cs.CoreV1().Secrets("audit").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	must(err)
	_, err = cs.CoreV1().Secrets("audit").Get(ctx, "s", metav1.GetOptions{})
	must(err)
	must(cs.CoreV1().Secrets("audit").Delete(ctx, "s", metav1.DeleteOptions{})) // verb not in the rule: None
	must(cs.CoreV1().ConfigMaps("audit").Delete(ctx, "cm", metav1.DeleteOptions{}))
	_, err = cs.Discovery().ServerVersion()
	must(err)
	_, err = cs.CoreV1().Pods("audit").List(ctx, metav1.ListOptions{}) // None
	must(err)

	// Stopping drains the backend: every event is written.
	must(s.Stop())
	got := readEvents(t, logPath, "audit-golden")
	golden := filepath.Join("testdata", "policy_golden.json")
	if *update {
		must(os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	must(err)
	if string(got) != string(want) {
		t.Errorf("events differ from %s (run with -update to see the new ones):\n%s", golden, got)
	}
}

// masked are the fields whose values change from run to run.
var masked = map[string]bool{
	"auditID": true, "requestReceivedTimestamp": true, "stageTimestamp": true, "uid": true,
	"resourceVersion": true, "creationTimestamp": true, "time": true,
	// The client certificate's fingerprint, X509SHA256=<hex>: a new
	// certificate every run.
	"authentication.kubernetes.io/credential-id": true,
	// TestUpstreamGolden's: the jti of an issued token, the token and its
	// expiry, the server's own address.
	"authentication.kubernetes.io/issued-credential-id": true,
	"token": true, "expirationTimestamp": true, "serverAddress": true,
}

// readEvents returns the events of userAgent in the log, masked, as
// indented JSON.
func readEvents(t *testing.T, path, userAgent string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var events []any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if ua, _ := ev["userAgent"].(string); !strings.HasPrefix(ua, userAgent) {
			continue
		}
		events = append(events, mask(ev))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(events, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

func mask(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if masked[k] {
				if s, ok := val.(string); ok && s != "" {
					x[k] = "<" + k + ">"
				}
				if list, ok := val.([]any); ok {
					for i := range list {
						list[i] = "<" + k + ">"
					}
				}
				continue
			}
			x[k] = mask(val)
		}
	case []any:
		for i := range x {
			x[i] = mask(x[i])
		}
	}
	return v
}
