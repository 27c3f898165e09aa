package memory

import (
	"context"
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// BenchmarkWatchFanOutStream measures the delivery of updates to N
// watchers of a memory Store read as the watch handler reads them (Stream,
// an idle callback, shared objects): one op is one update delivered to
// every watcher. Updates go in batches, each waited for by every watcher.
// Its CPU per op (of the process: the watchers' goroutines do the work)
// is the figure to compare; ns/op depends on the machine's load.
func BenchmarkWatchFanOutStream(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("watchers=%d", n), func(b *testing.B) { benchStreamFanOut(b, n) })
	}
}

func benchStreamFanOut(b *testing.B, watchers int) {
	const batch = 50
	be := newTestBackend(b, BackendConfig{CompactionInterval: -1, WatchBufferSize: 4 * batch})
	codec := storagetest.Codec()
	cr := storagetest.ConfigMapResource(codec)
	s := be.Store(Config{Codec: codec, NewFunc: cr.NewFunc, NewListFunc: cr.NewListFunc})
	ctx := context.Background()
	const key = "/configmaps/ns/c"
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}}
	if err := s.Create(ctx, key, cm, nil); err != nil {
		b.Fatal(err)
	}
	wctx, cancel := context.WithCancel(cacheable.WithObjects(storage.WithStreamedWatch(ctx)))
	defer cancel()
	progress := make(chan struct{}, watchers)
	var wg sync.WaitGroup
	for range watchers {
		w, err := s.Watch(wctx, "/configmaps", storage.ListOptions{Recursive: true})
		if err != nil {
			b.Fatal(err)
		}
		got := 0
		wg.Go(func() {
			w.(streamer).Stream(func(ev watch.Event) bool {
				if got++; got%batch == 0 {
					progress <- struct{}{}
				}
				return true
			}, func() bool { return true })
		})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += batch {
		for j := range batch {
			err := s.GuaranteedUpdate(ctx, key, &corev1.ConfigMap{}, false, nil, func(in runtime.Object) (runtime.Object, error) {
				c := in.(*corev1.ConfigMap)
				c.Data = map[string]string{"i": fmt.Sprint(done + j)}
				return c, nil
			}, nil)
			if err != nil {
				b.Fatal(err)
			}
		}
		for range watchers {
			<-progress
		}
	}
	b.StopTimer()
	cancel()
	wg.Wait()
}
