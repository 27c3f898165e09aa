package audit_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestNoPolicyNoAudit: without --audit-policy-file nothing is audited and
// the log file is not even created, as upstream's AuditOptions.ApplyTo
// ("No audit policy file provided, no events will be recorded for log
// backend").
func TestNoPolicyNoAudit(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "audit.log")
	s := kapitest.Start(t, kapitest.WithFlags("--audit-log-path="+logPath))
	cs := kubernetes.NewForConfigOrDie(s.Config)
	if _, err := cs.CoreV1().ConfigMaps("default").Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(logPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("audit log without a policy: stat %v, want no file", err)
	}
}

// TestLogTruncation: --audit-log-truncate-* wrap the log backend in the
// truncating backend (upstream's plugin/pkg/audit/truncate): an event
// over the event size loses its request and response objects and is
// annotated audit.k8s.io/truncated: "true"; small events are untouched.
func TestLogTruncation(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: RequestResponse\n  resources: [{group: \"\", resources: [configmaps]}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "audit.log")
	s := kapitest.Start(t, kapitest.WithFlags("--audit-log-path="+logPath, "--audit-policy-file="+policy,
		"--audit-log-truncate-enabled", "--audit-log-truncate-max-event-size=6000", "--audit-log-truncate-max-batch-size=10000",
		"--audit-log-version=audit.k8s.io/v1", "--audit-log-compress"))
	cs := kubernetes.NewForConfigOrDie(s.Config)
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps("default")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "small"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Data: map[string]string{"a": strings.Repeat("x", 8000)}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil { // flushes the log
		t.Fatal(err)
	}
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type event struct {
		Verb           string            `json:"verb"`
		ObjectRef      map[string]string `json:"objectRef"`
		RequestObject  json.RawMessage   `json:"requestObject"`
		ResponseObject json.RawMessage   `json:"responseObject"`
		Annotations    map[string]string `json:"annotations"`
	}
	seen := map[string]event{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		if len(sc.Bytes()) > 6000 {
			t.Errorf("event of %d bytes over the limit: %.200s", len(sc.Bytes()), sc.Text())
		}
		if ev.Verb == "create" && ev.ObjectRef["resource"] == "configmaps" {
			seen[ev.ObjectRef["name"]] = ev
		}
	}
	small, big := seen["small"], seen["big"]
	if small.RequestObject == nil || small.ResponseObject == nil || small.Annotations["audit.k8s.io/truncated"] != "" {
		t.Errorf("small create: %+v, want its objects and no truncation", small)
	}
	if big.RequestObject != nil || big.ResponseObject != nil || big.Annotations["audit.k8s.io/truncated"] != "true" {
		t.Errorf("big create: %+v, want objects dropped and audit.k8s.io/truncated=true", big)
	}
}
