package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// readEvents decodes every line of the log at path.
func readEvents(t *testing.T, path string) []Event {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []Event
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, ev)
	}
	return out
}

func TestLogBackendNoEventLost(t *testing.T) {
	tests := []struct {
		name      string
		run       bool
		senders   int
		perSender int
	}{
		{name: "running writer, more events than the queue holds", run: true, senders: 8, perSender: 2000},
		{name: "shutdown without run drains the queue", run: false, senders: 4, perSender: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sub", "audit.log")
			b, err := OpenLogBackend(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.run {
				if err := b.Run(make(chan struct{})); err != nil {
					t.Fatal(err)
				}
			}
			var wg sync.WaitGroup
			for s := 0; s < tt.senders; s++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < tt.perSender; i++ {
						ev := &Event{AuditID: types.UID(fmt.Sprintf("%d-%d", s, i)), Level: LevelMetadata}
						if !b.ProcessEvents(ev) {
							t.Errorf("ProcessEvents before Shutdown returned false")
							return
						}
					}
				}()
			}
			wg.Wait()
			b.Shutdown()
			b.Shutdown() // idempotent

			got := readEvents(t, path)
			if want := tt.senders * tt.perSender; len(got) != want {
				t.Fatalf("got %d events, want %d", len(got), want)
			}
			seen := make(map[types.UID]bool, len(got))
			for _, ev := range got {
				if seen[ev.AuditID] {
					t.Fatalf("event %s written twice", ev.AuditID)
				}
				seen[ev.AuditID] = true
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Mode().Perm(); got != 0o600 {
				t.Errorf("got file mode %v, want 0600", got)
			}
		})
	}
}

func TestLogBackendAfterShutdown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	b, err := OpenLogBackend(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Run(nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Run(nil); err == nil {
		t.Errorf("second Run: got nil error, want one")
	}
	b.Shutdown()
	if b.ProcessEvents(&Event{AuditID: "late"}) {
		t.Errorf("ProcessEvents after Shutdown: got true, want false")
	}
	if err := b.Run(nil); err == nil {
		t.Errorf("Run after Shutdown: got nil error, want one")
	}
	if got := readEvents(t, path); len(got) != 0 {
		t.Errorf("got %d events, want 0", len(got))
	}
}

// A sender blocked on a full queue (no writer running) must be released by
// Shutdown, and everything accepted must still be written.
func TestLogBackendShutdownReleasesBlockedSender(t *testing.T) {
	var buf bytes.Buffer
	b := NewLogBackend(&buf, nil, nil)
	for i := 0; i < DefaultQueueSize; i++ {
		if !b.ProcessEvents(&Event{AuditID: "x"}) {
			t.Fatal("queue refused an event before it was full")
		}
	}
	result := make(chan bool)
	go func() { result <- b.ProcessEvents(&Event{AuditID: "blocked"}) }()
	b.Shutdown()
	accepted := <-result
	lines := bytes.Count(buf.Bytes(), []byte("\n"))
	want := DefaultQueueSize
	if accepted {
		want++
	}
	if lines != want {
		t.Errorf("got %d lines, want %d (blocked sender accepted=%v)", lines, want, accepted)
	}
}

func TestOpenLogBackendErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, path string }{
		{"empty path", ""},
		{"parent is a file", filepath.Join(file, "audit.log")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := OpenLogBackend(tt.path, nil); err == nil {
				t.Errorf("got nil error, want one")
			}
		})
	}
}
