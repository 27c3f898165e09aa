package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
)

// TestDumpHeapAfterGC: the heap profile is the live heap at the dump
// (/debug/pprof/heap?gc=1: a collection first), not the heap as of the
// server's last cycle, which may have run amid the writes' requests and
// counts their garbage-to-be as live (session 21: 44.8 MB "in use" in the
// last cycle's profile, 35 MB live after a collection).
func TestDumpHeapAfterGC(t *testing.T) {
	var heapQuery string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/debug/pprof/heap" {
			heapQuery = r.URL.RawQuery
		}
		_, _ = w.Write([]byte("x"))
	}))
	defer srv.Close()
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep: %v", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	p := &proc{cmd: cmd, cfg: &rest.Config{Host: srv.URL}, transport: http.DefaultTransport}
	dir := t.TempDir()
	p.dump(context.Background(), dir, "kapi memory", "after-writes")
	if heapQuery != "gc=1" {
		t.Errorf("heap profile query = %q, want gc=1", heapQuery)
	}
	for _, f := range []string{"smaps_rollup", "heap.pprof", "metrics"} {
		if _, err := os.Stat(filepath.Join(dir, "kapi-memory.after-writes."+f)); err != nil {
			t.Errorf("dump file %s: %v", f, err)
		}
	}
}
