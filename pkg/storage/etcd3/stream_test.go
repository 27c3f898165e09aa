package etcd3

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
)

type streamWatch interface {
	watch.Interface
	Stream(send func(watch.Event) bool, idle func() bool) bool
}

// seen is one delivered event, as compared between readers.
type seen struct {
	typ  watch.EventType
	name string
	rv   uint64
}

// TestWatchStreamSameEventsAsResultChan: a watch read with Stream (its
// loop on the reader's goroutine, as the watch cache's reflector reads
// it) delivers exactly what a watch read on its result channel does,
// under concurrent writers: the same events in the same order, every
// write once, revisions strictly increasing.
func TestWatchStreamSameEventsAsResultChan(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	start := rvOf(t, mustCreate(t, s, newCM("first", nil, nil)))
	opts := storage.ListOptions{ResourceVersion: strconv.FormatUint(start, 10), Recursive: true}

	plain, err := s.Watch(ctx, "/configmaps/ns", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Stop()
	w, err := s.Watch(storage.WithStreamedWatch(ctx), "/configmaps/ns", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	sw, ok := w.(streamWatch)
	if !ok {
		t.Fatalf("watch %T cannot stream", w)
	}

	const writers, perWriter = 4, 25
	var mu sync.Mutex
	written := map[uint64]string{} // revision -> name
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range perWriter {
				// Five objects per writer: created, then updated in turn.
				name := fmt.Sprintf("w%d-%d", g, i%5)
				out := &corev1.ConfigMap{}
				var err error
				if i < 5 {
					err = s.Create(ctx, cmKey(name), newCM(name, nil, nil), out)
				} else {
					err = s.GuaranteedUpdate(ctx, cmKey(name), out, false, nil, func(in runtime.Object) (runtime.Object, error) {
						cm := in.(*corev1.ConfigMap)
						cm.Data = map[string]string{"i": strconv.Itoa(i)}
						return cm, nil
					}, nil)
				}
				if err != nil {
					t.Errorf("write %s: %v", name, err)
					return
				}
				rv, err := storage.ObjectResourceVersion(out)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				written[rv] = name
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	last := rvOf(t, mustCreate(t, s, newCM("last", nil, nil)))
	total := writers*perWriter + 1

	var streamed []seen
	idles := 0
	done := make(chan bool)
	go func() {
		done <- sw.Stream(func(ev watch.Event) bool {
			streamed = append(streamed, seen{ev.Type, ev.Object.(*corev1.ConfigMap).Name, rvOf(t, ev.Object)})
			return len(streamed) < total
		}, func() bool { idles++; return true })
	}()
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("Stream returned false: it could not stream")
		}
	case <-time.After(3 * eventWait):
		t.Fatalf("Stream delivered %d of %d events", len(streamed), total)
	}
	var read []seen
	for len(read) < total {
		ev := nextEvent(t, plain)
		read = append(read, seen{ev.Type, ev.Object.(*corev1.ConfigMap).Name, rvOf(t, ev.Object)})
	}

	if len(streamed) != len(read) {
		t.Fatalf("streamed %d events, the result channel %d", len(streamed), len(read))
	}
	for i := range read {
		if streamed[i] != read[i] {
			t.Fatalf("event %d: streamed %+v, result channel %+v", i, streamed[i], read[i])
		}
		if i > 0 && read[i].rv <= read[i-1].rv {
			t.Fatalf("event %d at revision %d after %d", i, read[i].rv, read[i-1].rv)
		}
	}
	if got := streamed[len(streamed)-1]; got.name != "last" || got.rv != last {
		t.Errorf("last event %+v, want ADDED last at %d", got, last)
	}
	if len(written) != total-1 {
		t.Fatalf("%d writes recorded, want %d", len(written), total-1)
	}
	for rv, name := range written {
		n := 0
		for _, e := range streamed {
			if e.rv == rv {
				n++
				if e.name != name {
					t.Errorf("revision %d: event of %s, want %s", rv, e.name, name)
				}
			}
		}
		if n != 1 {
			t.Errorf("revision %d (%s) delivered %d times", rv, name, n)
		}
	}
	if idles == 0 {
		t.Error("idle was never called")
	}
	// The watch is over once Stream returned: Stop returns at once.
	stopped := make(chan struct{})
	go func() { w.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(eventWait):
		t.Fatal("Stop after Stream did not return")
	}
	if _, ok := <-w.ResultChan(); ok {
		t.Error("result channel of a streamed watch delivered an event")
	}
}

// TestWatchStreamLifecycle: a watch marked for streaming starts nothing
// until it is read; Stop releases it unread; Stream after ResultChan
// returns false; Stop and idle returning false end a Stream.
func TestWatchStreamLifecycle(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := storage.WithStreamedWatch(context.Background())
	opts := storage.ListOptions{ResourceVersion: "0", Recursive: true}
	mustCreate(t, s, newCM("a", nil, nil))

	t.Run("stop unread", func(t *testing.T) {
		w, err := s.Watch(ctx, "/configmaps/ns", opts)
		if err != nil {
			t.Fatal(err)
		}
		stopped := make(chan struct{})
		go func() { w.Stop(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(eventWait):
			t.Fatal("Stop of an unread watch did not return")
		}
		if _, ok := <-w.ResultChan(); ok {
			t.Error("a stopped watch delivered an event")
		}
		if w.(streamWatch).Stream(func(watch.Event) bool { t.Error("event after Stop"); return false }, nil) {
			t.Error("Stream after Stop streamed")
		}
	})

	t.Run("result channel first", func(t *testing.T) {
		w, err := s.Watch(ctx, "/configmaps/ns", opts)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		expectEvents(t, w, wantEvent{typ: watch.Added, name: "a"})
		if w.(streamWatch).Stream(func(watch.Event) bool { t.Error("event streamed"); return false }, nil) {
			t.Error("Stream after ResultChan streamed")
		}
	})

	t.Run("stop ends a stream", func(t *testing.T) {
		w, err := s.Watch(ctx, "/configmaps/ns", opts)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 10)
		ended := make(chan bool)
		go func() {
			ended <- w.(streamWatch).Stream(func(ev watch.Event) bool {
				got <- ev.Object.(*corev1.ConfigMap).Name
				return true
			}, nil)
		}()
		select {
		case name := <-got:
			if name != "a" {
				t.Errorf("first event of %s, want a", name)
			}
		case <-time.After(eventWait):
			t.Fatal("no initial event streamed")
		}
		w.Stop()
		select {
		case ok := <-ended:
			if !ok {
				t.Error("Stream returned false")
			}
		case <-time.After(eventWait):
			t.Fatal("Stop did not end the stream")
		}
	})

	t.Run("idle false ends a stream", func(t *testing.T) {
		w, err := s.Watch(ctx, "/configmaps/ns", opts)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		var events int
		ended := make(chan bool)
		go func() {
			ended <- w.(streamWatch).Stream(func(watch.Event) bool { events++; return true }, func() bool { return false })
		}()
		select {
		case <-ended:
		case <-time.After(eventWait):
			t.Fatal("idle returning false did not end the stream")
		}
		if events != 1 {
			t.Errorf("%d events before idle, want the 1 initial event", events)
		}
	})
}
