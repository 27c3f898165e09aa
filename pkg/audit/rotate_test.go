package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRotationBySize writes ~3.5 MB of events into a log rotated at 1 MB
// keeping 2 backups: the live file and each backup stay under 1 MB, every
// line is a whole event, only the 2 newest backups remain, and no event
// of the last files is lost.
func TestRotationBySize(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	b, err := OpenRotatingLogBackend(path, FormatJSON, RotateConfig{MaxSizeMB: 1, MaxBackups: 2}, discardLogger())
	if err != nil {
		t.Fatal(err)
	}
	// Distinct backup names even when rotations fall in one millisecond.
	f := b.out.(*rotatingFile)
	tick := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.now = func() time.Time { tick = tick.Add(time.Second); return tick }
	if err := b.Run(nil); err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 900)
	const n = 4000
	for i := 0; i < n; i++ {
		b.ProcessEvents(&Event{AuditID: "id", RequestURI: fmt.Sprintf("/%d/%s", i, pad), Level: LevelMetadata})
	}
	b.Shutdown()

	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if len(names) != 3 || names[2] != "audit.log" || !strings.HasPrefix(names[0], "audit-2026-01-01T") || !strings.HasSuffix(names[0], ".log") {
		t.Fatalf("files %v, want 2 backups audit-<time>.log and audit.log", names)
	}
	last := -1
	for _, name := range names {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > 1<<20 {
			t.Errorf("%s is %d bytes, over 1 MB", name, st.Size())
		}
		fh, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var ev Event
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Fatalf("%s: a line is not an event: %v", name, err)
			}
			var i int
			fmt.Sscanf(ev.RequestURI, "/%d/", &i)
			if last >= 0 && i != last+1 {
				t.Fatalf("%s: event %d follows %d", name, i, last)
			}
			last = i
		}
		fh.Close()
	}
	if last != n-1 {
		t.Errorf("last event %d, want %d", last, n-1)
	}
}

// TestLegacyFormat checks the one-line text format (upstream's
// apiserver/pkg/audit/format.go EventString).
func TestLegacyFormat(t *testing.T) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)
	ev := &Event{
		AuditID: "abc", Stage: StageResponseComplete, Verb: "get", RequestURI: "/api/v1/namespaces/ns/pods",
		User:      authnv1.UserInfo{Username: "alice", Groups: []string{"g1", "g2"}},
		SourceIPs: []string{"10.0.0.1", "10.0.0.2"}, UserAgent: "kubectl/v1",
		ObjectRef:                &ObjectReference{Namespace: "ns", Resource: "pods"},
		ResponseStatus:           &metav1.Status{Code: 200},
		RequestReceivedTimestamp: metav1.NewMicroTime(ts),
	}
	want := `2026-01-02T03:04:05.123456Z AUDIT: id="abc" stage="ResponseComplete" ip="10.0.0.1" method="get" user="alice" groups="\"g1\",\"g2\"" as="<self>" asgroups="<lookup>" user-agent="kubectl/v1" namespace="ns" uri="/api/v1/namespaces/ns/pods" response="200"`
	if got := EventString(ev); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	bare := &Event{AuditID: "x", Stage: StageResponseStarted, RequestReceivedTimestamp: metav1.NewMicroTime(ts)}
	want = `2026-01-02T03:04:05.123456Z AUDIT: id="x" stage="ResponseStarted" ip="<unknown>" method="" user="<none>" groups="<none>" as="<self>" asgroups="<lookup>" user-agent="" namespace="<none>" uri="" response="<deferred>"`
	if got := EventString(bare); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}

	path := filepath.Join(t.TempDir(), "a.log")
	b, err := OpenRotatingLogBackend(path, FormatLegacy, RotateConfig{}, discardLogger())
	if err != nil {
		t.Fatal(err)
	}
	_ = b.Run(nil)
	b.ProcessEvents(ev)
	b.Shutdown()
	data, _ := os.ReadFile(path)
	if string(data) != EventString(ev)+"\n" {
		t.Errorf("file %q", data)
	}
	if _, err := OpenRotatingLogBackend(path, "xml", RotateConfig{}, nil); err == nil {
		t.Errorf("format xml accepted")
	}
}
