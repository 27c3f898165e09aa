package app

import (
	"testing"
	"time"
)

// runWhenReady runs whenReady on its own goroutine and returns a channel
// that receives the time fn was called.
func runWhenReady(ready, hooks, stop <-chan struct{}, afterReady time.Duration) <-chan time.Time {
	called := make(chan time.Time, 1)
	go whenReady(ready, hooks, stop, afterReady, func() { called <- time.Now() })
	return called
}

func TestWhenReadyAfterTheFirstReady(t *testing.T) {
	ready, hooks, stop := make(chan struct{}), make(chan struct{}), make(chan struct{})
	defer close(stop)
	called := runWhenReady(ready, hooks, stop, 50*time.Millisecond)
	close(hooks)
	select {
	case <-called:
		t.Fatal("called before ready, and before the hooks' second passed")
	case <-time.After(20 * time.Millisecond):
	}
	readyAt := time.Now()
	close(ready)
	select {
	case at := <-called:
		if d := at.Sub(readyAt); d < 50*time.Millisecond {
			t.Fatalf("called %v after ready, want at least 50ms", d)
		}
	case <-time.After(900 * time.Millisecond):
		t.Fatal("not called within 900ms of ready")
	}
}

func TestWhenReadyASecondAfterTheHooksWithoutReady(t *testing.T) {
	ready, hooks, stop := make(chan struct{}), make(chan struct{}), make(chan struct{})
	defer close(stop)
	called := runWhenReady(ready, hooks, stop, 0)
	hooksAt := time.Now()
	close(hooks)
	select {
	case at := <-called:
		if d := at.Sub(hooksAt); d < time.Second {
			t.Fatalf("called %v after the hooks without ready, want a second", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("not called within 10s of the hooks")
	}
}

func TestWhenReadyNotAfterStop(t *testing.T) {
	ready, hooks, stop := make(chan struct{}), make(chan struct{}), make(chan struct{})
	called := runWhenReady(ready, hooks, stop, 0)
	close(hooks)
	close(stop)
	select {
	case <-called:
		t.Fatal("called after stop")
	case <-time.After(1500 * time.Millisecond):
	}
}
