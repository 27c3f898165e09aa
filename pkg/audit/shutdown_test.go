package audit_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestNoEventLostOnGracefulShutdown stops a server while clients keep
// writing and reading at RequestResponse level: every request that got an
// answer has its ResponseComplete event in the log, because the backend is
// shut down (and drained) only after the in-flight requests have finished.
func TestNoEventLostOnGracefulShutdown(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "audit.log")
	s := kapitest.Start(t, kapitest.WithFlags("--audit-log-path="+logPath, "--audit-policy-file="+policy))
	client, err := rest.HTTPClientFor(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	base := s.Config.Host

	var (
		mu       sync.Mutex
		answered = map[string]bool{}
		stop     atomic.Bool
		wg       sync.WaitGroup
	)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/namespaces/default/configmaps", nil)
				resp, err := client.Do(req)
				cancel()
				if err != nil {
					continue
				}
				resp.Body.Close()
				if id := resp.Header.Get("Audit-Id"); id != "" && resp.StatusCode == http.StatusOK {
					mu.Lock()
					answered[id] = true
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(time.Second)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	stop.Store(true)
	wg.Wait()

	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	complete := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var ev struct {
			AuditID string `json:"auditID"`
			Stage   string `json:"stage"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		if ev.Stage == "ResponseComplete" {
			complete[ev.AuditID] = true
		}
	}
	if len(answered) < 20 {
		t.Fatalf("only %d requests answered; not a load", len(answered))
	}
	lost := 0
	for id := range answered {
		if !complete[id] {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d answered requests have no ResponseComplete event", lost, len(answered))
	}
	t.Logf("%d answered requests, all audited", len(answered))
}
