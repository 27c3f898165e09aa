package cacher

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
)

// BenchmarkWatchFanOut measures delivery of updates to N watchers of the
// cache: deliveries/s and the p99 latency from the write's start to a
// watcher's receipt. Writes go in batches, each waited for by every
// watcher, so no watcher is cut off. "chan": each watcher read on its
// result channel (the watcher's goroutine hands every event to the
// reader's); "stream": read with Stream on the reader's goroutine, as the
// watch handler reads.
func BenchmarkWatchFanOut(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		for _, stream := range []bool{false, true} {
			name := fmt.Sprintf("watchers=%d/chan", n)
			if stream {
				name = fmt.Sprintf("watchers=%d/stream", n)
			}
			b.Run(name, func(b *testing.B) { benchFanOut(b, n, stream) })
		}
	}
}

// fanOutBatch is the writes a fan-out benchmark sends before waiting for
// every watcher to have them all.
const fanOutBatch = 50

func benchFanOut(b *testing.B, watchers int, stream bool) {
	// With the storage metrics a server's caches record (per event, and
	// per event and watcher), so that their cost is measured too.
	m, err := storagemetrics.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	e := newPodEnv(b, envOptions{cacher: func(c *Config) {
		c.WatcherBuffer = 2 * fanOutBatch
		c.Metrics = m
		c.GroupResource = schema.GroupResource{Resource: "pods"}
	}})
	runFanOut(b, e, watchers, stream)
}

// runFanOut is BenchmarkWatchFanOut's loop on the cache of e.
func runFanOut(b *testing.B, e *podEnv, watchers int, stream bool) {
	const batch = fanOutBatch
	e.create("p", nil)
	var started sync.Map // revision → write start time
	var wg sync.WaitGroup
	progress := make(chan int, watchers)
	lat := make([][]time.Duration, watchers)
	for i := range watchers {
		got := 0
		receive := func(ev watch.Event) bool {
			if ev.Type != watch.Modified {
				return true
			}
			rv, _ := storage.ObjectResourceVersion(ev.Object)
			if t0, ok := started.Load(rv); ok {
				lat[i] = append(lat[i], time.Since(t0.(time.Time)))
			}
			got++
			if got%batch == 0 {
				progress <- got
			}
			return true
		}
		if stream {
			w, err := e.c.Watch(storage.WithStreamedWatch(e.ctx), "/pods", storage.ListOptions{ResourceVersion: "0", Recursive: true})
			if err != nil {
				b.Fatal(err)
			}
			wg.Go(func() {
				w.(interface {
					Stream(func(watch.Event) bool, func() bool) bool
				}).Stream(receive, nil)
			})
			continue
		}
		w := e.watch("0", storage.ListOptions{})
		<-w.ResultChan() // the initial ADDED
		wg.Go(func() {
			for ev := range w.ResultChan() {
				receive(ev)
			}
		})
	}
	b.ResetTimer()
	begin := time.Now()
	for done := 0; done < b.N; done += batch {
		for j := range batch {
			out := &corev1.Pod{}
			t0 := time.Now()
			// The revision is known only after the write: record the start
			// under the revision the write will get (writes are serial).
			cur, err := e.under.CurrentRevision(e.ctx)
			if err != nil {
				b.Fatalf("current revision: %v", err)
			}
			next := cur + 1
			started.Store(next, t0)
			err = e.c.GuaranteedUpdate(e.ctx, podKey("p"), out, false, nil, func(in runtime.Object) (runtime.Object, error) {
				p := in.(*corev1.Pod)
				p.Labels = map[string]string{"i": strconv.Itoa(done + j)}
				return p, nil
			}, nil)
			if err != nil {
				b.Fatalf("update: %v", err)
			}
			if rv := rvOf(b, out); rv != next {
				started.Delete(next)
			}
		}
		for range watchers {
			<-progress
		}
	}
	elapsed := time.Since(begin)
	b.StopTimer()
	total := ((b.N + batch - 1) / batch) * batch
	b.ReportMetric(float64(total*watchers)/elapsed.Seconds(), "deliveries/s")
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	if len(all) > 0 {
		slices.Sort(all)
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
	}
	e.c.Stop()
	wg.Wait()
}

// BenchmarkList10k lists 10,000 pods from the cache and from the memory
// store under it.
func BenchmarkList10k(b *testing.B) {
	const objects = 10000
	e := newPodEnv(b, envOptions{})
	var last *corev1.Pod
	for i := range objects {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p%05d", i), Labels: map[string]string{"app": "bench", "i": strconv.Itoa(i)}},
			Spec:       corev1.PodSpec{NodeName: "node", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}
		last = &corev1.Pod{}
		if err := e.under.Create(e.ctx, podKey(pod.Name), pod, last); err != nil {
			b.Fatalf("create: %v", err)
		}
	}
	e.waitRevision(rvOf(b, last))
	cases := []struct {
		name string
		s    storage.Interface
		rv   string
	}{
		{"cache/rv=0", e.c, "0"},
		{"cache/consistent", e.c, ""},
		{"memory/consistent", e.under, ""},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				list := &corev1.PodList{}
				if err := tc.s.GetList(e.ctx, "/pods", storage.ListOptions{ResourceVersion: tc.rv, Recursive: true}, list); err != nil {
					b.Fatalf("list: %v", err)
				}
				if len(list.Items) != objects {
					b.Fatalf("got %d items, want %d", len(list.Items), objects)
				}
			}
		})
	}
}
