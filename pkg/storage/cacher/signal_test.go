package cacher

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// A streamed watcher whose reader is slow now and then, with a buffer of
// one and no dispatch budget, lags again and again while events keep
// coming: each time its delivery loop is told (a signal and a nudge on
// its input, see cacheWatcher.signal) and catches up from the event
// window. It gets every event once, in order, and no nudge reaches the
// reader as an event; a second, fast watcher is not held up.
func TestStreamLaggingWatcherCatchesUpOnSignal(t *testing.T) {
	const writes = 120
	e := newPodEnv(t, envOptions{cacher: func(c *Config) {
		c.WatcherBuffer = 1
		c.DispatchBudget = -1 // lagging at once
		c.EventWindow, c.MaxEventWindow = 4*writes, 4*writes
	}})
	start := strconv.FormatUint(e.createCM("start"), 10)
	opts := storage.ListOptions{ResourceVersion: start, Recursive: true}
	slow, err := e.c.Watch(storage.WithStreamedWatch(e.ctx), "/pods", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(slow.Stop)
	fast := e.watch(start, storage.ListOptions{})

	var got []ev
	done := make(chan bool, 1)
	go func() {
		done <- slow.(streamer).Stream(func(we watch.Event) bool {
			if we.Type == "" || we.Object == nil {
				t.Errorf("event %d: not an event: %#v", len(got), we)
				return false
			}
			got = append(got, evOf(t, we))
			if len(got)%7 == 0 {
				time.Sleep(2 * time.Millisecond) // fall behind now and then
			}
			return len(got) < writes
		}, func() bool { return true })
	}()
	var want []ev
	for i := range writes {
		p := e.create(fmt.Sprintf("p%03d", i), nil)
		want = append(want, ev{watch.Added, p.Name, rvOf(t, p)})
	}
	expectEvents(t, fast, want)
	select {
	case <-done:
	case <-time.After(waitTimeout):
		t.Fatalf("the slow watcher got %d of %d events within %v", len(got), writes, waitTimeout)
	}
	if len(got) != writes {
		t.Fatalf("slow watcher got %d events, want %d", len(got), writes)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("slow watcher event %d: got %v, want %v", i, got[i], want[i])
		}
	}
	e.c.mu.RLock()
	_, stillThere := e.c.watchers[fast.(*cacheWatcher)]
	e.c.mu.RUnlock()
	if !stillThere {
		t.Error("the fast watcher was terminated")
	}
}

// A streamed watcher waiting for events (its input empty) ends as soon as
// it is stopped from another goroutine: the stop reaches a loop that
// waits on its input alone.
func TestStreamWaitingWatcherEndsOnStop(t *testing.T) {
	e := newPodEnv(t, envOptions{})
	w, err := e.c.Watch(storage.WithStreamedWatch(e.ctx), "/pods", storage.ListOptions{ResourceVersion: "0", Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan struct{})
	var once atomic.Bool
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		w.(streamer).Stream(func(watch.Event) bool { return true }, func() bool {
			if once.CompareAndSwap(false, true) {
				close(waiting)
			}
			return true
		})
	}()
	<-waiting
	time.Sleep(10 * time.Millisecond) // let it wait on its input
	w.Stop()
	select {
	case <-ended:
	case <-time.After(waitTimeout):
		t.Fatal("Stream still running after Stop")
	}
	expectClosed(t, w)
}
