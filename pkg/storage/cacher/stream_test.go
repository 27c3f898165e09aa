package cacher

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// streamer is the watch handler's view of a cache watcher.
type streamer interface {
	Stream(send func(watch.Event) bool, idle func() bool) bool
}

// Stream delivers, on the caller's goroutine, what ResultChan would: the
// initial state, then every event in order; idle is called between
// bursts; send returning false ends the watch and releases it.
func TestStreamDeliversInOrder(t *testing.T) {
	e := newPodEnv(t, envOptions{})
	first := e.create("a", nil)
	w, err := e.c.Watch(storage.WithStreamedWatch(e.ctx), "/pods", storage.ListOptions{ResourceVersion: "0", Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	st, ok := w.(streamer)
	if !ok {
		t.Fatalf("%T cannot stream", w)
	}
	const updates = 50
	var got []watch.Event
	idles := 0
	done := make(chan bool)
	firstIdle := make(chan struct{})
	go func() {
		done <- st.Stream(func(we watch.Event) bool {
			got = append(got, we)
			return len(got) < 1+updates
		}, func() bool {
			if idles++; idles == 1 {
				close(firstIdle)
			}
			return true
		})
	}()
	select { // nothing waiting yet: the reader is told so
	case <-firstIdle:
	case <-time.After(10 * time.Second):
		t.Fatal("idle not called while no event was waiting")
	}
	for i := range updates {
		e.relabel("a", map[string]string{"i": string(rune('a' + i%26))})
	}
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("Stream refused a watch nobody read")
		}
	case <-time.After(waitTimeout):
		t.Fatalf("Stream still running after %v", waitTimeout)
	}
	if len(got) != 1+updates {
		t.Fatalf("got %d events, want %d", len(got), 1+updates)
	}
	evs := make([]ev, len(got))
	for i, we := range got {
		evs[i] = evOf(t, we)
	}
	if want := (ev{watch.Added, "a", rvOf(t, first)}); evs[0] != want {
		t.Errorf("first event %v, want %v", evs[0], want)
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].Type != watch.Modified || evs[i].Name != "a" || evs[i].RV <= evs[i-1].RV {
			t.Errorf("event %d: %v after %v: want MODIFIED a at a later revision", i, evs[i], evs[i-1])
		}
	}
	// The watch is over: its result channel is closed.
	expectClosed(t, w)
}

// Once ResultChan was called the events go there: Stream declines. A
// watch whose context was not marked by WithStreamedWatch delivers on its
// result channel from the start.
func TestStreamAfterResultChanDeclines(t *testing.T) {
	e := newPodEnv(t, envOptions{})
	unmarked := e.watch("0", storage.ListOptions{})
	if unmarked.(streamer).Stream(func(watch.Event) bool { return false }, nil) {
		t.Fatal("Stream served a watch whose context did not ask for it")
	}
	w, err := e.c.Watch(storage.WithStreamedWatch(e.ctx), "/pods", storage.ListOptions{ResourceVersion: "0", Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	ch := w.ResultChan()
	if w.(streamer).Stream(func(watch.Event) bool { t.Error("event streamed to a second reader"); return false }, nil) {
		t.Fatal("Stream served a watch already read through ResultChan")
	}
	p := e.create("b", nil)
	select {
	case got := <-ch:
		if v := evOf(t, got); v != (ev{watch.Added, "b", rvOf(t, p)}) {
			t.Fatalf("got %v on the result channel, want ADDED b", v)
		}
	case <-time.After(waitTimeout):
		t.Fatal("no event on the result channel")
	}
}

// The watch's context ending ends a Stream waiting for events; watches
// stopped or cut off before anyone read them do not keep the cache from
// stopping.
func TestStreamEndsWithContextAndUnstartedWatchesRelease(t *testing.T) {
	e := newPodEnv(t, envOptions{})
	streamed := storage.WithStreamedWatch(e.ctx)
	ctx, cancel := context.WithCancel(streamed)
	w, err := e.c.Watch(ctx, "/pods", storage.ListOptions{ResourceVersion: "0", Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		w.(streamer).Stream(func(watch.Event) bool { return true }, func() bool { return true })
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case <-ended:
	case <-time.After(waitTimeout):
		t.Fatal("Stream still running after its context ended")
	}

	// Never read: one stopped, one whose context ends, one left to the
	// cache's stop.
	stopped, err := e.c.Watch(streamed, "/pods", storage.ListOptions{ResourceVersion: "0", Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	stopped.Stop()
	expectClosed(t, stopped)
	ctx2, cancel2 := context.WithCancel(streamed)
	if _, err := e.c.Watch(ctx2, "/pods", storage.ListOptions{ResourceVersion: "0", Recursive: true}); err != nil {
		t.Fatal(err)
	}
	cancel2()
	left, err := e.c.Watch(streamed, "/pods", storage.ListOptions{ResourceVersion: "0", Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stopDone := make(chan struct{})
	go func() { e.c.Stop(); once.Do(func() { close(stopDone) }) }()
	select {
	case <-stopDone:
	case <-time.After(waitTimeout):
		t.Fatal("the cache's Stop waits for watches nobody started")
	}
	expectClosed(t, left)
}
