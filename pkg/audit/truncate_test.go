package audit

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestRotationCompress: with Compress, rotated files are gzipped
// (<backup>.gz, lumberjack's naming) and still count as backups.
func TestRotationCompress(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	b, err := OpenRotatingLogBackend(path, FormatJSON, RotateConfig{MaxSizeMB: 1, MaxBackups: 2, Compress: true}, discardLogger())
	if err != nil {
		t.Fatal(err)
	}
	f := b.out.(*rotatingFile)
	tick := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.now = func() time.Time { tick = tick.Add(time.Second); return tick }
	if err := b.Run(nil); err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 900)
	for i := 0; i < 4000; i++ {
		b.ProcessEvents(&Event{AuditID: "id", RequestURI: "/" + pad, Level: LevelMetadata})
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
	if len(names) != 3 || names[2] != "audit.log" || !strings.HasSuffix(names[0], ".log.gz") || !strings.HasSuffix(names[1], ".log.gz") {
		t.Fatalf("files %v, want 2 gzipped backups and audit.log", names)
	}
	fh, err := os.Open(filepath.Join(dir, names[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<20)
	lines := 0
	for sc.Scan() {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("a compressed line is not an event: %v", err)
		}
		lines++
	}
	if sc.Err() != nil || lines == 0 {
		t.Errorf("compressed backup: %d events, %v", lines, sc.Err())
	}
}

type recordingBackend struct {
	mu      sync.Mutex
	batches [][]*Event
}

func (r *recordingBackend) ProcessEvents(evs ...*Event) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches = append(r.batches, evs)
	return true
}
func (r *recordingBackend) Run(<-chan struct{}) error { return nil }
func (r *recordingBackend) Shutdown()                 {}

// TestTruncate follows upstream's truncate backend (k8s.io/apiserver
// plugin/pkg/audit/truncate/truncate_test.go v1.37): a too-big event at
// Request level loses its objects and is annotated
// audit.k8s.io/truncated=true; one still too big (or too big at Metadata
// level) is dropped and counted; batches are split by size.
func TestTruncate(t *testing.T) {
	small := func() *Event { return &Event{AuditID: "small", Level: LevelMetadata} }
	smallSize, _ := eventSize(small())
	big := &runtime.Unknown{Raw: []byte(`"` + strings.Repeat("x", 4000) + `"`), ContentType: runtime.ContentTypeJSON}
	withObjects := &Event{AuditID: "objects", Level: LevelRequestResponse, RequestObject: big, ResponseObject: big}
	hugeMeta := &Event{AuditID: "huge", Level: LevelMetadata, RequestURI: "/" + strings.Repeat("y", 4000)}

	rec := &recordingBackend{}
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	tr := Truncate(rec, TruncateConfig{MaxEventSize: 1000, MaxBatchSize: 2*smallSize + 10}, m, discardLogger())
	if !tr.ProcessEvents(small(), withObjects, hugeMeta, small(), small()) {
		t.Fatal("ProcessEvents reported a failure")
	}
	var ids [][]string
	for _, b := range rec.batches {
		var row []string
		for _, ev := range b {
			row = append(row, string(ev.AuditID))
		}
		ids = append(ids, row)
	}
	// small + truncated objects exceed the batch limit: split; huge is
	// dropped.
	if got := strings.Join(flat(ids), ","); got != "small,objects,small,small" || len(ids) < 2 {
		t.Fatalf("batches %v", ids)
	}
	for _, b := range rec.batches {
		for _, ev := range b {
			if ev.AuditID == "objects" && (ev.RequestObject != nil || ev.ResponseObject != nil || ev.Annotations["audit.k8s.io/truncated"] != "true") {
				t.Errorf("truncated event %+v", ev)
			}
		}
	}
	if withObjects.RequestObject == nil || withObjects.Annotations != nil {
		t.Errorf("the original event was changed")
	}
	if got := counterValue(t, reg, "apiserver_audit_error_total", map[string]string{"plugin": "truncate"}); got != 1 {
		t.Errorf("apiserver_audit_error_total{plugin=truncate} %v, want 1", got)
	}
}

func flat(rows [][]string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}
