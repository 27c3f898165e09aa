package memory

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

type streamer interface {
	Stream(send func(watch.Event) bool, idle func() bool) bool
}

// Stream delivers on the caller's goroutine what ResultChan would, in
// order, and declines once ResultChan was called; watches never read are
// released when stopped or when their context ends, so the backend closes.
func TestStream(t *testing.T) {
	b := newTestBackend(t, testConfig())
	codec := storagetest.Codec()
	cr := storagetest.ConfigMapResource(codec)
	s := b.Store(Config{Codec: codec, NewFunc: cr.NewFunc, NewListFunc: cr.NewListFunc})
	ctx := storage.WithStreamedWatch(context.Background())
	if w, err := s.Watch(context.Background(), "/configmaps", storage.ListOptions{Recursive: true}); err != nil {
		t.Fatal(err)
	} else {
		if w.(streamer).Stream(func(watch.Event) bool { return false }, nil) {
			t.Error("Stream served a watch whose context did not ask for it")
		}
		w.Stop()
	}
	w, err := s.Watch(ctx, "/configmaps", storage.ListOptions{Recursive: true, ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	var got []watch.Event
	idles := 0
	done := make(chan bool)
	firstIdle := make(chan struct{})
	go func() {
		done <- w.(streamer).Stream(func(ev watch.Event) bool {
			got = append(got, ev)
			return len(got) < n
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
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("c%02d", i)}}
		if err := s.Create(ctx, "/configmaps/ns/"+cm.Name, cm, nil); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("Stream refused a watch nobody read")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Stream still running")
	}
	for i, ev := range got {
		cm, ok := ev.Object.(*corev1.ConfigMap)
		if ev.Type != watch.Added || !ok || cm.Name != fmt.Sprintf("c%02d", i) {
			t.Fatalf("event %d: %s %T, want ADDED c%02d", i, ev.Type, ev.Object, i)
		}
	}
	if _, open := <-w.ResultChan(); open {
		t.Error("result channel open after the stream ended")
	}

	read, err := s.Watch(ctx, "/configmaps", storage.ListOptions{Recursive: true, ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	read.ResultChan()
	if read.(streamer).Stream(func(watch.Event) bool { return true }, nil) {
		t.Error("Stream served a watch already read through ResultChan")
	}
	read.Stop()

	stopped, err := s.Watch(ctx, "/configmaps", storage.ListOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	stopped.Stop()
	if _, open := <-stopped.ResultChan(); open {
		t.Error("a watch stopped before it was read still delivers")
	}
	cctx, cancel := context.WithCancel(ctx)
	if _, err := s.Watch(cctx, "/configmaps", storage.ListOptions{Recursive: true}); err != nil {
		t.Fatal(err)
	}
	cancel()
	closed := make(chan struct{})
	go func() { _ = b.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the backend's Close waits for watches nobody read")
	}
}
