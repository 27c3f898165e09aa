package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// dump saves, under dir (when -dump is set), what a memory investigation
// needs at one point of the run (label: "idle", "after-writes"): the
// process's /proc/PID/smaps_rollup, /proc/PID/smaps (per mapping: the
// binary's, bbolt's database file, the heap) and /proc/PID/status, and, from a
// server that serves them (kapi with its default --profiling; the
// reference's --profiling is on by default too), the heap profile of
// /debug/pprof/heap and the Go runtime figures of /metrics. It never
// changes what is measured: it runs after the RSS reading of that point.
func (p *proc) dump(ctx context.Context, dir, target, label string) {
	if dir == "" {
		return
	}
	name := strings.NewReplacer(" ", "-").Replace(target)
	base := filepath.Join(dir, name+"."+label)
	pid := p.cmd.Process.Pid
	for _, f := range []string{"smaps_rollup", "smaps", "status"} {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, f)); err == nil {
			_ = os.WriteFile(base+"."+f, b, 0o644)
		}
	}
	client := &http.Client{Transport: p.transport, Timeout: time.Minute}
	for _, f := range []struct{ path, file string }{
		{"/metrics", "metrics"},
		// gc=1: the heap as live right now (after a collection), not as
		// of the last cycle, which may have run amid the writes' requests.
		{"/debug/pprof/heap?gc=1", "heap.pprof"},
	} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.cfg.Host+f.path, nil)
		if err != nil {
			continue
		}
		resp, err := client.Do(req)
		if err != nil {
			fmt.Fprintf(os.Stderr, "   dump %s: %v\n", f.path, err)
			continue
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			fmt.Fprintf(os.Stderr, "   dump %s: status %d, %v\n", f.path, resp.StatusCode, err)
			continue
		}
		_ = os.WriteFile(base+"."+f.file, b, 0o644)
	}
}
