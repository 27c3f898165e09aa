package audit_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/internal/testaudit"
	"github.com/kapi-dev/kapi/kapitest"
	"github.com/kapi-dev/kapi/pkg/audit"
)

// sink is a TLS webhook on loopback that keeps the EventLists it gets.
type sink struct {
	srv     *httptest.Server
	mu      sync.Mutex
	batches [][]audit.Event
	fail    bool
}

func newSink(t *testing.T) *sink {
	s := &sink{}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var list struct {
			Kind       string        `json:"kind"`
			APIVersion string        `json:"apiVersion"`
			Items      []audit.Event `json:"items"`
		}
		if err := json.Unmarshal(body, &list); err != nil || list.Kind != "EventList" || list.APIVersion != "audit.k8s.io/v1" || r.Method != http.MethodPost {
			t.Errorf("webhook got %s %s", r.Method, body)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.fail {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		s.batches = append(s.batches, list.Items)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// kubeconfig writes a kubeconfig for the sink (server and its CA).
func (s *sink) kubeconfig(t *testing.T) string {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
	data := `apiVersion: v1
kind: Config
clusters:
- name: sink
  cluster:
    server: ` + s.srv.URL + `
    certificate-authority-data: ` + b64(ca) + `
contexts:
- name: sink
  context: {cluster: sink, user: sink}
current-context: sink
users:
- name: sink
  user: {}
`
	p := filepath.Join(t.TempDir(), "webhook.kubeconfig")
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func (s *sink) events() (batches int, byAgent map[string][]audit.Event, maxBatch int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	byAgent = map[string][]audit.Event{}
	for _, b := range s.batches {
		maxBatch = max(maxBatch, len(b))
		for _, ev := range b {
			byAgent[ev.UserAgent] = append(byAgent[ev.UserAgent], ev)
		}
	}
	return len(s.batches), byAgent, maxBatch
}

// TestWebhookBatches runs a server whose audit events go to a webhook on
// loopback in batch mode: they arrive as audit.k8s.io/v1 EventLists of at
// most --audit-webhook-batch-max-size events, and every request answered
// before the graceful shutdown has its event there after it.
func TestWebhookBatches(t *testing.T) {
	sk := newSink(t)
	s := kapitest.Start(t, kapitest.WithFlags(
		"--audit-webhook-config-file="+sk.kubeconfig(t),
		"--audit-policy-file="+testaudit.MetadataPolicy(t),
		"--audit-webhook-batch-max-size=5",
		"--audit-webhook-batch-max-wait=200ms",
		"--audit-webhook-batch-throttle-qps=1000", "--audit-webhook-batch-throttle-burst=1000",
	))
	cfg := rest.CopyConfig(s.Config)
	cfg.UserAgent = "webhook-test"
	cs := kubernetes.NewForConfigOrDie(cfg)
	const n = 23
	for i := 0; i < n; i++ {
		if _, err := cs.CoreV1().ConfigMaps("default").List(context.Background(), metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Batches are sent without waiting for the shutdown.
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, byAgent, _ := sk.events()
		if len(byAgent["webhook-test"]) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no batch within 20s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	batches, byAgent, maxBatch := sk.events()
	if got := len(byAgent["webhook-test"]); got != n {
		t.Errorf("got %d events of the test's requests, want %d", got, n)
	}
	if maxBatch > 5 || batches < 5 {
		t.Errorf("%d batches, largest %d: want batches of at most 5", batches, maxBatch)
	}
	for _, ev := range byAgent["webhook-test"] {
		if ev.Stage != audit.StageResponseComplete || ev.Verb != "list" || ev.ResponseStatus == nil || ev.ResponseStatus.Code != 200 {
			t.Errorf("event %+v", ev)
			break
		}
	}
}

// TestWebhookBlockingStrict checks the blocking modes: each ProcessEvents
// is one POST; a refused POST fails it in blocking-strict mode only.
func TestWebhookBlockingStrict(t *testing.T) {
	sk := newSink(t)
	kc := sk.kubeconfig(t)
	for _, mode := range []string{audit.ModeBlocking, audit.ModeBlockingStrict} {
		cfg := audit.DefaultWebhookConfig()
		cfg.KubeconfigFile, cfg.Mode, cfg.InitialBackoff = kc, mode, time.Millisecond
		b, err := audit.NewWebhookBackend(cfg, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Run(nil); err != nil {
			t.Fatal(err)
		}
		if !b.ProcessEvents(&audit.Event{AuditID: "1"}, &audit.Event{AuditID: "2"}) {
			t.Errorf("%s: accepted POST reported as failed", mode)
		}
		sk.mu.Lock()
		sk.fail = true
		sk.mu.Unlock()
		ok := b.ProcessEvents(&audit.Event{AuditID: "3"})
		if want := mode == audit.ModeBlocking; ok != want {
			t.Errorf("%s: refused POST: ProcessEvents = %v, want %v", mode, ok, want)
		}
		sk.mu.Lock()
		sk.fail = false
		sk.mu.Unlock()
		b.Shutdown()
		if b.ProcessEvents(&audit.Event{}) {
			t.Errorf("%s: accepted after Shutdown", mode)
		}
	}
	batches, _, _ := sk.events()
	if batches != 2 {
		t.Errorf("%d batches received, want 2 (one per accepted POST)", batches)
	}
	cfg := audit.DefaultWebhookConfig()
	cfg.KubeconfigFile, cfg.Mode = kc, "sometimes"
	if _, err := audit.NewWebhookBackend(cfg, nil, nil); err == nil || !strings.Contains(err.Error(), "invalid audit webhook mode") {
		t.Errorf("bad mode: %v", err)
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// roundTripCounter counts the requests it passes on.
type roundTripCounter struct {
	next http.RoundTripper
	n    *atomic.Int32
}

func (c roundTripCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// TestWebhookWrapTransport: WrapTransport wraps the client's transport
// (how kapi counts posts to sinks with deprecated certificates, as
// upstream's GenericWebhook does).
func TestWebhookWrapTransport(t *testing.T) {
	sk := newSink(t)
	cfg := audit.DefaultWebhookConfig()
	cfg.KubeconfigFile, cfg.Mode = sk.kubeconfig(t), audit.ModeBlocking
	var n atomic.Int32
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return roundTripCounter{next: rt, n: &n} }
	b, err := audit.NewWebhookBackend(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Run(nil); err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	if !b.ProcessEvents(&audit.Event{AuditID: "1"}) {
		t.Fatal("POST failed")
	}
	if got := n.Load(); got != 1 {
		t.Errorf("%d requests through the wrapper, want 1", got)
	}
}
