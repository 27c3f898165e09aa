package kapitest_test

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// BenchmarkStartStop measures a server's start (to ready, with the
// per-namespace defaults made: what StartE waits for) and stop, on the
// memory backend and on embedded etcd, reported separately as start-ms
// and stop-ms per server.
func BenchmarkStartStop(b *testing.B) {
	for _, backend := range benchBackends {
		b.Run(backend.name, func(b *testing.B) {
			var start, stop time.Duration
			cpu0 := processCPU()
			for b.Loop() {
				t0 := time.Now()
				s, err := kapitest.StartE(b.TempDir(), slog.New(slog.DiscardHandler), backend.opts...)
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := s.Stop(); err != nil {
					b.Fatal(err)
				}
				start += t1.Sub(t0)
				stop += time.Since(t1)
			}
			b.ReportMetric(float64(start.Microseconds())/1000/float64(b.N), "start-ms")
			b.ReportMetric(float64(stop.Microseconds())/1000/float64(b.N), "stop-ms")
			// CPU time of the whole process (every goroutine, the GC)
			// per start and stop: on a shared machine, less dependent on
			// the other load than the wall-clock times.
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms")
		})
	}
}

var benchBackends = []struct {
	name string
	opts []kapitest.Option
}{{"memory", nil}, {"etcd", []kapitest.Option{kapitest.WithEmbeddedEtcd()}}}

// BenchmarkIdleServerMemory starts 10 servers (on embedded etcd: 3), lets
// them settle and reports the Go heap and stacks in use (after a GC) per
// server: the memory an idle test server costs inside the test process.
// The first server of the process also pays for what all share (the
// managed-fields type converter, the OpenAPI models): a warm-up server
// is started and stopped first so that the figure is the marginal cost.
func BenchmarkIdleServerMemory(b *testing.B) {
	for _, backend := range benchBackends {
		n := 10
		if backend.name == "etcd" {
			n = 3
		}
		b.Run(backend.name, func(b *testing.B) {
			warm, err := kapitest.StartE(b.TempDir(), nil, backend.opts...)
			if err != nil {
				b.Fatal(err)
			}
			if err := warm.Stop(); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				before := heapInUse()
				servers := make([]*kapitest.Server, n)
				for i := range servers {
					s, err := kapitest.StartE(b.TempDir(), nil, backend.opts...)
					if err != nil {
						b.Fatal(err)
					}
					servers[i] = s
				}
				time.Sleep(time.Second)
				after := heapInUse()
				for _, s := range servers {
					if err := s.Stop(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(after-before)/float64(n)/(1<<20), "MiB/server")
			}
		})
	}
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}

// BenchmarkReset1000 measures Reset of a server holding 1,000 ConfigMaps
// of the test's (in 10 namespaces), on the memory backend and on embedded
// etcd. Filling the server is not timed.
func BenchmarkReset1000(b *testing.B) {
	for _, backend := range benchBackends {
		b.Run(backend.name, func(b *testing.B) {
			srv := kapitest.Start(b, backend.opts...)
			cs := kubernetes.NewForConfigOrDie(srv.Config)
			for b.Loop() {
				b.StopTimer()
				fill(b, cs, 10, 100)
				b.StartTimer()
				if err := srv.Reset(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// fill creates namespaces ns-0..ns-(namespaces-1) with perNamespace
// ConfigMaps each, 16 requests at a time.
func fill(b testing.TB, cs kubernetes.Interface, namespaces, perNamespace int) {
	ctx := context.Background()
	for i := range namespaces {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("ns-", i)}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	work := make(chan [2]int)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for w := range work {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cm-", w[1])}, Data: map[string]string{"k": "v"}}
				if _, err := cs.CoreV1().ConfigMaps(fmt.Sprint("ns-", w[0])).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					b.Error(err)
				}
			}
		})
	}
	for i := range namespaces {
		for j := range perNamespace {
			work <- [2]int{i, j}
		}
	}
	close(work)
	wg.Wait()
}
