package server

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestDestroyWaitsForRunningHooks: after NonBlockingRun, Destroy runs the
// destroy functions only once every post-start hook it started returned,
// so a destroy function that checks "did my hook run" (the controllers'
// started flags and WaitGroups) cannot read that state while its hook is
// still starting (a race CI's detector reported on such a WaitGroup, the
// hook's Add against the destroy function's Wait). The hook here returns
// once the destroy function ran, or after a bound: without the wait, the
// destroy function runs first and sees the hook not returned.
func TestDestroyWaitsForRunningHooks(t *testing.T) {
	tc := newTestChain(t, nil)
	entered := make(chan struct{})
	destroyRan := make(chan struct{})
	var hookReturned, sawReturned atomic.Bool
	if err := tc.head.AddPostStartHook("slow-hook", func(context.Context) error {
		close(entered)
		select {
		case <-destroyRan:
		case <-time.After(200 * time.Millisecond):
		}
		hookReturned.Store(true)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	tc.head.AddDestroyFunc(func() {
		sawReturned.Store(hookReturned.Load())
		close(destroyRan)
	})
	stop := make(chan struct{})
	if _, _, err := tc.head.PrepareRun().NonBlockingRun(stop, time.Second); err != nil {
		t.Fatal(err)
	}
	<-entered
	close(stop)
	tc.head.Destroy()
	if !sawReturned.Load() {
		t.Error("a destroy function ran while a post-start hook had not returned")
	}
}

// TestNoHookStartsAfterDestroy: hooks of a server destroyed before it ran
// are not started (they would work on destroyed state).
func TestNoHookStartsAfterDestroy(t *testing.T) {
	tc := newTestChain(t, nil)
	var ran atomic.Bool
	if err := tc.head.AddPostStartHook("late-hook", func(context.Context) error {
		ran.Store(true)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	prepared := tc.head.PrepareRun()
	tc.head.Destroy()
	stop := make(chan struct{})
	if _, _, err := prepared.NonBlockingRun(stop, time.Second); err != nil {
		t.Fatal(err)
	}
	close(stop)
	// NonBlockingRun starts hooks before it returns, on goroutines: a
	// started hook would be counted in hooksRunning.
	tc.head.hooksRunning.Wait()
	if ran.Load() {
		t.Error("a post-start hook ran on a destroyed server")
	}
}

// TestDestroyEndsHooksWaitingOnTheirContext: Destroy cancels the context
// of the hooks it waits for, so destroying a server that was never told
// to stop does not hang on a hook that runs until its context ends (the
// informer and controller hooks do). Before, Destroy waited for such a
// hook until the caller closed the stop channel, here never.
func TestDestroyEndsHooksWaitingOnTheirContext(t *testing.T) {
	tc := newTestChain(t, nil)
	entered := make(chan struct{})
	if err := tc.head.AddPostStartHook("runs-until-stopped", func(ctx context.Context) error {
		close(entered)
		<-ctx.Done()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	if _, _, err := tc.head.PrepareRun().NonBlockingRun(stop, time.Second); err != nil {
		t.Fatal(err)
	}
	<-entered
	destroyed := make(chan struct{})
	go func() {
		tc.head.Destroy()
		close(destroyed)
	}()
	select {
	case <-destroyed:
	case <-time.After(20 * time.Second):
		t.Fatal("Destroy still waits for a post-start hook 20s later; the server was not told to stop")
	}
}
