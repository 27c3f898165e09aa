package kapitest_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/kapitest"
)

// BenchmarkStartStop measures a server's start (to ready) and stop on the
// memory backend, reported separately as start-ms and stop-ms per server.
func BenchmarkStartStop(b *testing.B) {
	var start, stop time.Duration
	for b.Loop() {
		t0 := time.Now()
		s, err := kapitest.StartE(b.TempDir(), slog.New(slog.DiscardHandler))
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
}
