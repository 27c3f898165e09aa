package server

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// assertNoRunGoroutines fails if a goroutine started by a Run (through its
// runGroup) is still alive. One that has called wg.Done may still be on
// its way out when Run returns: give those a moment; a goroutine still
// blocked stays and fails the test.
func assertNoRunGoroutines(t *testing.T) {
	t.Helper()
	var left []string
	for deadline := time.Now().Add(5 * time.Second); ; {
		left = runGoroutines()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%d goroutines of Run still running after it returned:\n%s", len(left), strings.Join(left, "\n\n"))
}

// runGoroutines returns the stacks of the goroutines a runGroup started.
func runGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var left []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "created by github.com/kapi-dev/kapi/pkg/server.(*runGroup).goTracked") {
			left = append(left, g)
		}
	}
	return left
}

// Run returns only once the goroutines it started have: here a post-start
// hook that keeps going a while after its context is cancelled.
func TestRunWaitsForPostStartHooks(t *testing.T) {
	tc := newTestChain(t, nil)
	close(tc.extSignal)
	release := make(chan struct{})
	cancelled := make(chan struct{})
	var returned atomic.Bool
	if err := tc.head.AddPostStartHook("slow-to-stop", func(ctx context.Context) error {
		<-ctx.Done()
		close(cancelled)
		<-release
		returned.Store(true)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tc.head.PrepareRun().Run(ctx) }()
	stop()
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the hook's context was not cancelled after shutdown")
	}
	select {
	case err := <-done:
		t.Fatalf("Run returned (%v) while a post-start hook was still running", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !returned.Load() {
		t.Fatal("Run returned before the post-start hook did")
	}
	assertNoRunGoroutines(t)
}

// A failing pre-shutdown hook makes Run return its error at once, without
// the delay or the drain (lifecycle.md 34), and still only after its
// goroutines: the HTTP server is closed and the post-start hooks' context
// cancelled, though NotAcceptingNewRequest never fires.
func TestRunPreShutdownHookErrorStopsEverything(t *testing.T) {
	serving, client, base := tlsServing(t)
	tc := newTestChain(t, func(c *Config) {
		c.SecureServing = serving
		c.ShutdownDelayDuration = time.Hour // never reached
	})
	close(tc.extSignal)
	if err := tc.head.AddPreShutdownHook("boom", func() error { return errors.New("bad") }); err != nil {
		t.Fatal(err)
	}
	var hookReturned atomic.Bool
	if err := tc.head.AddPostStartHook("until-stopped", func(ctx context.Context) error {
		<-ctx.Done()
		hookReturned.Store(true)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tc.head.PrepareRun().Run(ctx) }()
	waitFor(t, func() bool {
		resp, err := client.Get(base + "/agg")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})

	stop()
	select {
	case err := <-done:
		if err == nil || err.Error() != `PreShutdownHook "boom" failed: bad` {
			t.Fatalf("got %v, want the hook's error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return at once after a pre-shutdown hook failed")
	}
	if !hookReturned.Load() {
		t.Fatal("Run returned before the post-start hook did")
	}
	assertNoRunGoroutines(t)
	fresh := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 5 * time.Second}
	if _, err := fresh.Get(base + "/agg"); err == nil {
		t.Fatal("after Run failed a new connection must fail")
	}
	if tc.rec.index("PreShutdownHooksStopped") < 0 {
		t.Fatalf("signals %v: PreShutdownHooksStopped must still fire", tc.rec.order())
	}
	if tc.rec.index("NotAcceptingNewRequest") >= 0 {
		t.Fatalf("signals %v: NotAcceptingNewRequest must not fire after a failure", tc.rec.order())
	}
}

// failingAudit is an audit backend that cannot start.
type failingAudit struct{}

func (failingAudit) Run(<-chan struct{}) error { return errors.New("disk full") }
func (failingAudit) Shutdown()                 {}

// Run fails before serving when the audit backend cannot start, and leaves
// no watcher behind: it returns without ctx ever being cancelled.
func TestRunAuditBackendError(t *testing.T) {
	tc := newTestChain(t, func(c *Config) { c.AuditBackend = failingAudit{} })
	close(tc.extSignal)
	done := make(chan error, 1)
	go func() { done <- tc.head.PrepareRun().Run(context.Background()) }()
	select {
	case err := <-done:
		if err == nil || err.Error() != "failed to run the audit backend: disk full" {
			t.Fatalf("got %v", err)
		}
		assertNoRunGoroutines(t)
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after the audit backend failed")
	}
}

// After a clean shutdown, too, nothing Run started is left.
func TestRunLeavesNoGoroutines(t *testing.T) {
	serving, client, base := tlsServing(t)
	tc := newTestChain(t, func(c *Config) { c.SecureServing = serving })
	close(tc.extSignal)
	if err := tc.head.AddPostStartHook("until-stopped", func(ctx context.Context) error {
		<-ctx.Done()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tc.head.PrepareRun().Run(ctx) }()
	waitFor(t, func() bool {
		resp, err := client.Get(base + "/agg")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	assertNoRunGoroutines(t)
	if tc.rec.index("HTTPServerStoppedListening") < 0 || tc.rec.index("InFlightRequestsDrained") < 0 {
		t.Fatalf("signals %v: every shutdown signal fires before Run returns", tc.rec.order())
	}
}

// PostStartHooksFinished closes once every hook of the chain returned nil,
// not while one still runs; a server stopped first never closes it, and
// its waiter is one of Run's goroutines (gone when Run returns).
func TestPostStartHooksFinished(t *testing.T) {
	for _, stopFirst := range []bool{false, true} {
		t.Run(map[bool]string{false: "hooks return", true: "stopped first"}[stopFirst], func(t *testing.T) {
			tc := newTestChain(t, nil)
			close(tc.extSignal)
			release := make(chan struct{})
			if err := tc.head.AddPostStartHook("quick", func(context.Context) error { return nil }); err != nil {
				t.Fatal(err)
			}
			if err := tc.head.AddPostStartHook("held", func(ctx context.Context) error {
				select {
				case <-release:
				case <-ctx.Done():
					return ctx.Err()
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			finished := tc.head.PostStartHooksFinished()
			ctx, stop := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- tc.head.PrepareRun().Run(ctx) }()
			select {
			case <-finished:
				t.Fatal("closed while the hook \"held\" was still running")
			case <-time.After(100 * time.Millisecond):
			}
			if stopFirst {
				stop()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				select {
				case <-finished:
					t.Fatal("closed although a hook never returned")
				default:
				}
				assertNoRunGoroutines(t)
				return
			}
			close(release)
			select {
			case <-finished:
			case <-time.After(10 * time.Second):
				t.Fatal("not closed after every hook returned")
			}
			stop()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			assertNoRunGoroutines(t)
		})
	}
}
