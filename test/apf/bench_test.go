package apf

import (
	"context"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/kapitest"
)

// BenchmarkThroughput: GET /api/v1/namespaces/default as a non-exempt
// user (global-default with APF on) from 32 concurrent clients over
// loopback HTTPS, with APF on (the default) and off (max-in-flight), on
// kube's default limits (400+200). Reports requests per second and the
// process's CPU time per request (server and clients share the process).
func BenchmarkThroughput(b *testing.B) {
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"apf=on", nil},
		{"apf=off", []string{"--enable-priority-and-fairness=false"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			srv := kapitest.Start(b, kapitest.WithFlags(tc.flags...))
			ids := newIdentitiesTB(b, srv)
			client := ids.asTB(b, "bob")
			ctx := context.Background()
			if code, _, _, err := client.get(ctx, "/api/v1/namespaces/default"); err != nil || code != http.StatusOK {
				b.Fatalf("warm-up: %d %v", code, err)
			}
			b.SetParallelism(16)
			b.ResetTimer()
			start, cpu0 := time.Now(), cpuTime()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					code, _, _, err := client.get(ctx, "/api/v1/namespaces/default")
					if err != nil || code != http.StatusOK {
						b.Errorf("GET: %d %v", code, err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
