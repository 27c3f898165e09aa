package flowcontrol

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// BenchmarkClassifyAndDispatch is the per-request cost of APF with
// upstream's default configuration and free seats: classify a user's
// request (it goes through 12 schemas to global-default), admit it,
// finish it. No metrics (see BenchmarkClassifyAndDispatchWithMetrics).
func BenchmarkClassifyAndDispatch(b *testing.B) {
	benchDispatch(b, nil)
}

func BenchmarkClassifyAndDispatchWithMetrics(b *testing.B) {
	m, err := NewMetrics(nil)
	if err != nil {
		b.Fatal(err)
	}
	benchDispatch(b, m)
}

func benchDispatch(b *testing.B, m *Metrics) {
	c := New(Options{ServerConcurrencyLimit: 600, Metrics: m})
	c.Apply(defaultConfig())
	req := &Request{User: "alice", Groups: []string{"system:authenticated"}, IsResourceRequest: true, Verb: "list", Resource: "pods", Namespace: "default"}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		cls := c.Classify(req)
		tk, err := c.Admit(ctx, cls, Width{Seats: 1}, time.Second, RequestDescription{})
		if err != nil {
			b.Fatal(err)
		}
		tk.Finish()
	}
	// On a shared machine wall time per op includes time the process was
	// not scheduled; the CPU time per op is the cost.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkClassifyAndDispatchParallel: the same from every CPU at once
// (contention on the level's lock).
func BenchmarkClassifyAndDispatchParallel(b *testing.B) {
	m, _ := NewMetrics(nil)
	c := New(Options{ServerConcurrencyLimit: 600, Metrics: m})
	c.Apply(defaultConfig())
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		req := &Request{User: "alice", Groups: []string{"system:authenticated"}, IsResourceRequest: true, Verb: "list", Resource: "pods", Namespace: "default"}
		for pb.Next() {
			tk, err := c.Admit(ctx, c.Classify(req), Width{Seats: 1}, time.Second, RequestDescription{})
			if err != nil {
				b.Fatal(err)
			}
			tk.Finish()
		}
	})
}
