package garbagecollector

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// TestRunWorkersBoundsConcurrency: runWorkers handles every item, never
// more than n at once (the rest stay queued, as with n workers), and
// returns, with its handlers done, once the queue shuts down.
func TestRunWorkersBoundsConcurrency(t *testing.T) {
	const n, items = 3, 10
	q := workqueue.NewTyped[*node]()
	release := make(chan struct{})
	var running, peak, handled atomic.Int32
	var started sync.WaitGroup
	started.Add(n)
	handle := func(_ context.Context, nd *node) {
		cur := running.Add(1)
		for {
			p := peak.Load()
			if cur <= p || peak.CompareAndSwap(p, cur) {
				break
			}
		}
		if handled.Add(1) <= n {
			started.Done()
		}
		<-release
		running.Add(-1)
		q.Done(nd)
	}
	for i := range items {
		q.Add(&node{identity: objectRef{Name: string(rune('a' + i))}})
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runWorkers(context.Background(), q, n, handle)
	}()
	started.Wait()
	// The first n are being handled; give a wrongly unbounded runner
	// time to take more.
	time.Sleep(50 * time.Millisecond)
	if got := running.Load(); got != n {
		t.Fatalf("%d items handled at once, want %d", got, n)
	}
	if got := q.Len(); got != items-n {
		t.Fatalf("%d items left in the queue while %d are handled, want %d", got, n, items-n)
	}
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for handled.Load() < items && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := handled.Load(); got != items {
		t.Fatalf("%d items handled, want %d", got, items)
	}
	q.ShutDown()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("runWorkers did not return after the queue shut down")
	}
	if p := peak.Load(); p > n {
		t.Fatalf("peak concurrency %d, want at most %d", p, n)
	}
	if r := running.Load(); r != 0 {
		t.Fatalf("%d handlers still running after runWorkers returned", r)
	}
}

// TestRunWorkersStopsWithContext: with every slot busy, runWorkers returns
// when ctx ends, after its handlers.
func TestRunWorkersStopsWithContext(t *testing.T) {
	q := workqueue.NewTyped[*node]()
	defer q.ShutDown()
	ctx, cancel := context.WithCancel(context.Background())
	var finished atomic.Bool
	handle := func(ctx context.Context, nd *node) {
		<-ctx.Done()
		time.Sleep(10 * time.Millisecond)
		finished.Store(true)
		q.Done(nd)
	}
	q.Add(&node{identity: objectRef{Name: "a"}})
	q.Add(&node{identity: objectRef{Name: "b"}})
	done := make(chan struct{})
	go func() {
		defer close(done)
		runWorkers(ctx, q, 1, handle)
	}()
	// One slot: one item taken, the other left in the queue.
	deadline := time.Now().Add(10 * time.Second)
	for q.Len() != 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	if got := q.Len(); got != 1 {
		t.Fatalf("%d items left in the queue with one slot busy, want 1", got)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("runWorkers did not return after ctx ended")
	}
	if !finished.Load() {
		t.Fatal("runWorkers returned before its handler")
	}
}
