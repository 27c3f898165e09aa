package memory

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// A streamed watch waits for its next event on its queue alone: it must
// still end when stopped, when its context ends, and when stopped while
// events are being written, delivering what it delivers once and in order.
func TestStreamedWatchEndsWhileWaiting(t *testing.T) {
	b := NewBackend(testConfig())
	t.Cleanup(func() {
		// Close waits for every watch's delivery to return: bounded, so
		// that a watch that missed its end fails the test, not its run.
		closed := make(chan error, 1)
		go func() { closed <- b.Close() }()
		select {
		case err := <-closed:
			if err != nil {
				t.Errorf("close backend: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("close backend: a watch's delivery never returned")
		}
	})
	codec := storagetest.Codec()
	cr := storagetest.ConfigMapResource(codec)
	s := b.Store(Config{Codec: codec, NewFunc: cr.NewFunc, NewListFunc: cr.NewListFunc})

	// stream starts a streamed watch of ns's configmaps and returns it,
	// a channel closed when its Stream returned, what it delivered, and a
	// channel closed at its first idle (nothing waiting).
	stream := func(ctx context.Context, ns string) (watch.Interface, chan struct{}, *[]string, chan struct{}) {
		t.Helper()
		w, err := s.Watch(storage.WithStreamedWatch(ctx), "/configmaps/"+ns, storage.ListOptions{Recursive: true})
		if err != nil {
			t.Fatal(err)
		}
		ended, idled := make(chan struct{}), make(chan struct{})
		var got []string
		var once sync.Once
		go func() {
			defer close(ended)
			if !w.(streamer).Stream(func(ev watch.Event) bool {
				got = append(got, ev.Object.(*corev1.ConfigMap).Name)
				return true
			}, func() bool {
				once.Do(func() { close(idled) })
				return true
			}) {
				t.Error("Stream refused a watch nobody read")
			}
		}()
		return w, ended, &got, idled
	}
	waitEnd := func(ended chan struct{}, what string) {
		t.Helper()
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Stream still waiting", what)
		}
	}
	create := func(ns string, i int) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("c%04d", i)}}
		if err := s.Create(context.Background(), "/configmaps/"+ns+"/"+cm.Name, cm, nil); err != nil {
			t.Error(err)
		}
	}

	w, ended, _, idled := stream(context.Background(), "stop")
	<-idled
	w.Stop()
	waitEnd(ended, "Stop while waiting")

	ctx, cancel := context.WithCancel(context.Background())
	_, ended, _, idled = stream(ctx, "cancel")
	<-idled
	cancel()
	waitEnd(ended, "context ended while waiting")

	// Stops racing with writes: whatever is delivered is a prefix of the
	// writes, in order, each once.
	for round := range 50 {
		ns := fmt.Sprintf("race%02d", round)
		w, ended, got, idled := stream(context.Background(), ns)
		<-idled
		writes := make(chan struct{})
		go func() {
			defer close(writes)
			for i := range 40 {
				create(ns, i)
			}
		}()
		if round%2 == 0 {
			time.Sleep(time.Duration(round) * 20 * time.Microsecond)
		}
		w.Stop()
		waitEnd(ended, "Stop during writes")
		<-writes
		for i, name := range *got {
			if want := fmt.Sprintf("c%04d", i); name != want {
				t.Fatalf("round %d: event %d is %s, want %s (got %v)", round, i, name, want, *got)
			}
		}
	}
}
