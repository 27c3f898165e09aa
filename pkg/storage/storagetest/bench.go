package storagetest

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// Sizes of the benchmarks.
const (
	// BenchListSize is the number of objects ListOf10000 lists.
	BenchListSize = 10000
	// benchSeedWriters write the list's objects concurrently (etcd batches
	// concurrent writes into one fsync).
	benchSeedWriters = 16
	// benchFanOutWindow is how many events a fan-out writer may be ahead of
	// the slowest watcher: below every backend's per-watcher buffer, so no
	// watcher is cut off for being slow.
	benchFanOutWindow = 50
	// benchFanOutWriters is the number of writes in flight in a fan-out.
	benchFanOutWriters = 4
	// benchWait bounds every wait of a benchmark for its watchers.
	benchWait = time.Minute
)

// RunBenchmarks runs the storage benchmarks on one backend, each as a b.Run
// sub-benchmark, on small ConfigMaps ([ConfigMapResource]):
//
//   - Create: one create per iteration, serially (latency, not throughput).
//   - Get: a consistent ("") get of one object.
//   - GuaranteedUpdate: an update of one object (read, modify, write).
//   - ListOf10000: a consistent list of BenchListSize objects under one
//     prefix. The objects are written once per backend, concurrently, before
//     the first iteration (not timed).
//   - WatchFanOut/1, WatchFanOut/1000: each iteration is one create under a
//     prefix that 1 or 1000 watchers watch; an iteration waits only while
//     the slowest watcher is more than a small window behind, so writes and
//     deliveries overlap. It reports events/s (events received per second,
//     all watchers together) and the p50 and p99 latency from the start of
//     the write to a watcher's receipt of its event.
//
// Every benchmark uses b.Loop, so -benchtime=Nx gives exactly N iterations;
// -count runs each sub-benchmark's function again on the same backend. Create, Get and GuaranteedUpdate also report
// their p50 and p99 latency. newBackend is called once: all sub-benchmarks
// share its backend, under distinct key prefixes, so the store grows as
// they run (Create adds one object per iteration).
func RunBenchmarks(b *testing.B, newBackend func(b *testing.B) Backend) {
	b.Helper()
	bk := newBackend(b)
	res := ConfigMapResource(Codec())
	s := bk.Store(b, res)
	listSeeded := false
	creates, fanOuts := 0, 0 // names stay unique when -count runs a function again
	b.Run("Create", func(b *testing.B) { benchCreate(b, s, &creates) })
	b.Run("Get", func(b *testing.B) { benchGet(b, s) })
	b.Run("GuaranteedUpdate", func(b *testing.B) { benchUpdate(b, s) })
	b.Run("ListOf10000", func(b *testing.B) {
		if !listSeeded {
			seedList(b, s)
			listSeeded = true
		}
		benchList(b, s)
	})
	for _, n := range []int{1, 1000} {
		b.Run(fmt.Sprintf("WatchFanOut/%d", n), func(b *testing.B) {
			fanOuts++
			benchFanOut(b, s, n, fmt.Sprintf("bench-watch-%d-%d", n, fanOuts))
		})
	}
}

func benchCM(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "bench"}},
		Data:       data,
	}
}

func cmKey(ns, name string) string { return "/configmaps/" + ns + "/" + name }

// latencies collects operation latencies and reports percentiles.
type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	b.ReportMetric(float64(l[len(l)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(l[(len(l)*99)/100].Nanoseconds())/1e3, "p99-µs")
}

func benchCreate(b *testing.B, s storage.Interface, next *int) {
	ctx := b.Context()
	var lat latencies
	b.ReportAllocs()
	for b.Loop() {
		name := "c" + strconv.Itoa(*next)
		*next++
		t0 := time.Now()
		if err := s.Create(ctx, cmKey("bench-create", name), benchCM("bench-create", name, map[string]string{"k": "v"}), nil); err != nil {
			b.Fatalf("create %s: %v", name, err)
		}
		lat = append(lat, time.Since(t0))
	}
	lat.report(b)
}

func benchGet(b *testing.B, s storage.Interface) {
	ctx := b.Context()
	key := cmKey("bench-get", "a")
	if err := s.Create(ctx, key, benchCM("bench-get", "a", map[string]string{"k": "v"}), nil); err != nil && !storage.IsExists(err) {
		b.Fatalf("create: %v", err)
	}
	var lat latencies
	b.ReportAllocs()
	for b.Loop() {
		out := &corev1.ConfigMap{}
		t0 := time.Now()
		if err := s.Get(ctx, key, storage.GetOptions{}, out); err != nil {
			b.Fatalf("get: %v", err)
		}
		lat = append(lat, time.Since(t0))
	}
	lat.report(b)
}

func benchUpdate(b *testing.B, s storage.Interface) {
	ctx := b.Context()
	key := cmKey("bench-update", "a")
	if err := s.Create(ctx, key, benchCM("bench-update", "a", map[string]string{"k": "v"}), nil); err != nil && !storage.IsExists(err) {
		b.Fatalf("create: %v", err)
	}
	var lat latencies
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		v := strconv.Itoa(i)
		t0 := time.Now()
		err := s.GuaranteedUpdate(ctx, key, &corev1.ConfigMap{}, false, nil, func(in runtime.Object) (runtime.Object, error) {
			cm := in.(*corev1.ConfigMap)
			cm.Data = map[string]string{"k": v}
			return cm, nil
		}, nil)
		if err != nil {
			b.Fatalf("update: %v", err)
		}
		lat = append(lat, time.Since(t0))
	}
	lat.report(b)
}

// seedList writes BenchListSize configmaps under /configmaps/bench-list.
func seedList(b *testing.B, s storage.Interface) {
	b.Helper()
	ctx := b.Context()
	start := time.Now()
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	for w := range benchSeedWriters {
		wg.Go(func() {
			for i := w; i < BenchListSize && failed.Load() == nil; i += benchSeedWriters {
				name := fmt.Sprintf("c%05d", i)
				err := s.Create(ctx, cmKey("bench-list", name), benchCM("bench-list", name, map[string]string{"k": "v"}), nil)
				if err != nil && !storage.IsExists(err) {
					err = fmt.Errorf("create %s: %w", name, err)
					failed.CompareAndSwap(nil, &err)
				}
			}
		})
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		b.Fatalf("seed list: %v", *err)
	}
	b.Logf("wrote %d objects in %v", BenchListSize, time.Since(start).Round(time.Millisecond))
}

func benchList(b *testing.B, s storage.Interface) {
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		l := &corev1.ConfigMapList{}
		if err := s.GetList(ctx, "/configmaps/bench-list", storage.ListOptions{Recursive: true}, l); err != nil {
			b.Fatalf("list: %v", err)
		}
		if len(l.Items) != BenchListSize {
			b.Fatalf("got %d items, want %d", len(l.Items), BenchListSize)
		}
	}
}
