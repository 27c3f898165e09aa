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

// serverProfile, when -server-profile names a directory, takes the
// server's CPU profile (/debug/pprof/profile, served by kapi's and the
// reference's default --profiling) for -server-profile-seconds from now,
// in the background, and returns a function that waits for it and saves
// it as <dir>/<target>.<label>.cpu.pprof. It never changes what is
// measured except for the profiler's own cost in the server, which both
// kinds of server pay alike; it is off by default.
func (p *proc) serverProfile(ctx context.Context, dir, target, label string, seconds int) (wait func()) {
	if dir == "" || seconds <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		client := &http.Client{Transport: p.transport, Timeout: time.Duration(seconds)*time.Second + time.Minute}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", p.cfg.Host, seconds), nil)
		if err != nil {
			return
		}
		resp, err := client.Do(req)
		if err != nil {
			fmt.Fprintf(os.Stderr, "   server profile: %v\n", err)
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			fmt.Fprintf(os.Stderr, "   server profile: status %d, %v\n", resp.StatusCode, err)
			return
		}
		name := strings.NewReplacer(" ", "-").Replace(target)
		if err := os.WriteFile(filepath.Join(dir, name+"."+label+".cpu.pprof"), b, 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "   server profile: %v\n", err)
		}
	}()
	return func() { <-done }
}
