package healthz

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kapi-dev/kapi/internal/testwait"
)

// TestMain fails the package if a log flusher goroutine outlives its test.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		deadline := time.Now().Add(5 * time.Second)
		for {
			buf := make([]byte, 1<<20)
			stacks := string(buf[:runtime.Stack(buf, true)])
			if !strings.Contains(stacks, "healthz.(*LogCheck).run") {
				break
			}
			if time.Now().After(deadline) {
				fmt.Fprintf(os.Stderr, "leaked log flusher goroutine:\n%s\n", stacks)
				code = 1
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	os.Exit(code)
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, 10*time.Second, time.Millisecond, what, cond)
}

// TestLogCheck covers health.md 17 with a fake clock and a flush that can
// fail.
func TestLogCheck(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var flushes atomic.Int64
	var fail atomic.Bool
	flush := func() error {
		flushes.Add(1)
		if fail.Load() {
			return errors.New("disk full")
		}
		return nil
	}
	l := NewLogHealthz(flush, clk)
	defer l.Stop()

	if l.Name() != "log" {
		t.Errorf("Name: got %q, want log", l.Name())
	}
	if flushes.Load() != 0 || clk.HasWaiters() {
		t.Fatalf("flusher started before first use")
	}
	if err := l.Check(nil); err != nil {
		t.Fatalf("first use: got %v, want nil", err)
	}
	eventually(t, "the immediate flush", func() bool { return flushes.Load() == 1 })
	if !clk.HasWaiters() {
		t.Fatalf("no ticker after first use")
	}

	// Ticks keep it passing: the last successful flush stays recent.
	for i := range 3 {
		before := flushes.Load()
		clk.Step(time.Minute)
		eventually(t, fmt.Sprintf("tick %d flush", i), func() bool { return flushes.Load() > before })
		eventually(t, "a passing check", func() bool { return l.Check(nil) == nil })
	}

	// Failing flushes: still passing under two minutes, blocked from two.
	fail.Store(true)
	before := flushes.Load()
	clk.Step(time.Minute)
	eventually(t, "failed flush", func() bool { return flushes.Load() > before })
	if err := l.Check(nil); err != nil {
		t.Errorf("1m after the last good flush: got %v, want nil", err)
	}
	before = flushes.Load()
	clk.Step(time.Minute)
	eventually(t, "failed flush", func() bool { return flushes.Load() > before })
	if err := l.Check(nil); err == nil || err.Error() != "logging blocked" {
		t.Errorf("2m after the last good flush: got %v, want logging blocked", err)
	}

	// The aggregate and single-check paths show it.
	mux := install(t, "/livez", HandlerOptions{}, PingHealthz, l)
	if got := serve(t, mux, "GET", "/livez"); got.code != 500 || got.body != "[+]ping ok\n[-]log failed: reason withheld\nlivez check failed\n" {
		t.Errorf("aggregate: got %d %q", got.code, got.body)
	}
	if got := serve(t, mux, "GET", "/livez/log"); got.code != 500 || got.body != "internal server error: logging blocked\n" {
		t.Errorf("single: got %d %q", got.code, got.body)
	}

	// Recovery.
	fail.Store(false)
	clk.Step(time.Minute)
	eventually(t, "recovery", func() bool { return l.Check(nil) == nil })

	// After Stop no more flushes happen.
	l.Stop()
	stopped := flushes.Load()
	clk.Step(10 * time.Minute)
	if err := l.Check(nil); err == nil {
		t.Errorf("10m after Stop: got nil, want logging blocked")
	}
	if got := flushes.Load(); got != stopped {
		t.Errorf("flushes after Stop: got %d, want %d", got, stopped)
	}
}

// A flush that never returns blocks logging: the check fails after two
// minutes even though the flusher is stuck.
func TestLogCheckBlockedFlush(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	release := make(chan struct{})
	var entered atomic.Bool
	l := NewLogHealthz(func() error { entered.Store(true); <-release; return nil }, clk)
	if err := l.Check(nil); err != nil {
		t.Fatalf("first use: got %v", err)
	}
	eventually(t, "flush entered", entered.Load)
	clk.Step(2 * time.Minute)
	if err := l.Check(nil); err == nil || err.Error() != "logging blocked" {
		t.Errorf("got %v, want logging blocked", err)
	}
	close(release)
	l.Stop()
}

func TestLogCheckStopBeforeUse(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	var flushes atomic.Int64
	l := NewLogHealthz(func() error { flushes.Add(1); return nil }, clk)
	l.Stop()
	l.Stop() // idempotent
	if err := l.Check(nil); err != nil {
		t.Errorf("right after Stop: got %v, want nil", err)
	}
	if flushes.Load() != 0 || clk.HasWaiters() {
		t.Errorf("flusher started after Stop")
	}
}

func TestLogCheckDefaults(t *testing.T) {
	l := NewLogHealthz(nil, nil)
	defer l.Stop()
	if err := l.Check(nil); err != nil {
		t.Errorf("got %v, want nil", err)
	}
}
