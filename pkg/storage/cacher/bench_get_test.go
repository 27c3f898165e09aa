package cacher

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/embedded"
	"github.com/kapi-dev/kapi/pkg/storage/etcd3"
	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// benchGetObjects is the number of objects BenchmarkGetUpdateEtcd reads and
// updates (as kapi-bench's rows: 2,000 objects of a few hundred bytes).
const benchGetObjects = 2000

// BenchmarkGetUpdateEtcd measures consistent gets (resourceVersion "") and
// updates (GuaranteedUpdate, as the registry's Update: read-modify-write)
// through the watch cache over etcd3 on embedded etcd with fsync on, one
// goroutine and 32 at once (kapi-bench's c=32), and reports the etcd
// requests made per operation (etcd-req/op), counted by the store's
// metrics.
func BenchmarkGetUpdateEtcd(b *testing.B) {
	srv, err := embedded.Start(context.Background(), embedded.Config{
		DataDir: filepath.Join(b.TempDir(), "etcd"), Logger: quietLogger(),
	})
	if err != nil {
		b.Fatalf("start embedded etcd: %v", err)
	}
	b.Cleanup(srv.Close)
	reg := prometheus.NewRegistry()
	m, err := storagemetrics.New(reg)
	if err != nil {
		b.Fatal(err)
	}
	codec := storagetest.Codec()
	pr := storagetest.PodResource(codec)
	cr := storagetest.ConfigMapResource(codec)
	cms := etcd3.New(srv.Client(), etcd3.Config{Codec: codec, NewFunc: cr.NewFunc, NewListFunc: cr.NewListFunc, Logger: quietLogger()})
	s := etcd3.New(srv.Client(), etcd3.Config{
		Codec: codec, NewFunc: pr.NewFunc, NewListFunc: pr.NewListFunc, Logger: quietLogger(),
		Metrics: m, GroupResource: schema.GroupResource{Resource: "pods"},
	})
	c, err := New(Config{
		Storage: s, ResourcePrefix: pr.Prefix, NewFunc: pr.NewFunc, NewListFunc: pr.NewListFunc,
		GetAttrs: pr.GetAttrs, Logger: quietLogger(),
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Stop)
	ctx := context.Background()
	if err := c.WaitReady(ctx); err != nil {
		b.Fatal(err)
	}
	name := func(i int) string { return fmt.Sprintf("p%05d", i) }
	if _, err := parallelDo(benchGetObjects, 32, func(i int) error {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name(i),
			Labels:      map[string]string{"app": "bench", "n": "0"},
			Annotations: map[string]string{"text": "an object of a few hundred bytes, as a small controller's objects are; padding padding padding"}}}
		return c.Create(ctx, podKey(name(i)), pod, nil)
	}); err != nil {
		b.Fatalf("create: %v", err)
	}
	requests := func() float64 {
		mfs, err := reg.Gather()
		if err != nil {
			b.Fatal(err)
		}
		var n uint64
		for _, mf := range mfs {
			if mf.GetName() == "etcd_request_duration_seconds" {
				for _, m := range mf.GetMetric() {
					n += m.GetHistogram().GetSampleCount()
				}
			}
		}
		return float64(n)
	}
	get := func(i int) error {
		return c.Get(ctx, podKey(name(i)), storage.GetOptions{}, &corev1.Pod{})
	}
	var seq atomic.Int64
	update := func(i int) error {
		v := strconv.FormatInt(seq.Add(1), 10)
		return c.GuaranteedUpdate(ctx, podKey(name(i)), &corev1.Pod{}, false, nil, func(in runtime.Object) (runtime.Object, error) {
			p := in.(*corev1.Pod)
			p.Labels["n"] = v
			return p, nil
		}, nil)
	}
	for _, op := range []struct {
		name string
		fn   func(i int) error
		// other: another resource is written meanwhile (etcd's revision
		// moves on without events for this cache).
		other bool
	}{{"Get", get, false}, {"Get/other-writes", get, true}, {"GuaranteedUpdate", update, false}} {
		for _, conc := range []int{1, 32} {
			b.Run(fmt.Sprintf("%s/c=%d", op.name, conc), func(b *testing.B) {
				stop := make(chan struct{})
				writerDone := make(chan struct{})
				go func() {
					defer close(writerDone)
					for op.other {
						select {
						case <-stop:
							return
						default:
						}
						key := "/configmaps/ns/cm" + strconv.FormatInt(seq.Add(1), 10)
						if err := cms.Create(ctx, key, &corev1.ConfigMap{}, nil); err != nil {
							b.Errorf("create configmap: %v", err)
							return
						}
					}
				}()
				r0 := requests()
				lat := make([]time.Duration, b.N)
				b.ReportAllocs()
				b.ResetTimer()
				// Each worker takes its own objects: no two updates of one
				// object at once (kapi-bench's rows neither).
				var next atomic.Int64
				if _, err := parallelDo(b.N, conc, func(int) error {
					n := int(next.Add(1) - 1)
					t0 := time.Now()
					err := op.fn(n % benchGetObjects)
					lat[n] = time.Since(t0)
					return err
				}); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				close(stop)
				<-writerDone
				b.ReportMetric((requests()-r0)/float64(b.N), "etcd-req/op")
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			})
		}
	}
}

// parallelDo runs fn(0..n-1) on conc goroutines; the first error stops it.
func parallelDo(n, conc int, fn func(i int) error) (int, error) {
	var next atomic.Int64
	var first atomic.Pointer[error]
	done := make(chan struct{}, conc)
	for range conc {
		go func() {
			defer func() { done <- struct{}{} }()
			for first.Load() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					first.CompareAndSwap(nil, &err)
				}
			}
		}()
	}
	for range conc {
		<-done
	}
	if err := first.Load(); err != nil {
		return 0, *err
	}
	return n, nil
}
