package metrics

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// exposition is the text exposition of family name in reg.
func exposition(t *testing.T, reg prometheus.Gatherer, name string) string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, mf := range mfs {
		if mf.GetName() == name {
			if _, err := expfmt.MetricFamilyToText(&buf, mf); err != nil {
				t.Fatal(err)
			}
		}
	}
	return buf.String()
}

// TestDispatchDuration: the dispatch latency family's series exist, at
// 0, as soon as a cache's Dispatch is made; a watcher's deliveries show
// at once, and stay when it ends; the exposition is the one a
// client_golang histogram vector with upstream's name, help and buckets
// gives for the same observations (upstream's is one), sums aside.
func TestDispatchDuration(t *testing.T) {
	const name = "apiserver_watch_events_dispatch_duration_seconds"
	reg, m := newRegistry(t)
	if got := exposition(t, reg, name); got != "" {
		t.Fatalf("before any cache: %q", got)
	}
	pods := m.Resource(schema.GroupResource{Resource: "pods"}).Cache().Dispatch()
	deps := m.Resource(schema.GroupResource{Group: "apps", Resource: "deployments"}).Cache().Dispatch()
	if again := m.Resource(schema.GroupResource{Resource: "pods"}).Cache().Dispatch(); again != pods {
		t.Error("a second Dispatch of a resource made other series")
	}
	// Without metrics, or for an internal store: nothing, safely.
	var none *Metrics
	none.Resource(schema.GroupResource{Resource: "pods"}).Cache().Dispatch().NewCounter().Close()
	if d := m.RequestsOnly(schema.GroupResource{Resource: "leases"}).Cache().Dispatch(); d != nil {
		t.Error("an internal store has dispatch series")
	}

	want := prometheus.NewRegistry()
	vec := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    name,
		Help:    "[ALPHA] Histogram of watch event dispatch latency broken by resource type and pipeline stage. The 'total' stage is the end-to-end latency of a delivered event.",
		Buckets: []float64{0.0001, 0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5},
	}, []string{"group", "resource", "stage"})
	want.MustRegister(vec)
	for _, gr := range []schema.GroupResource{{Resource: "pods"}, {Group: "apps", Resource: "deployments"}} {
		for _, stage := range []string{"total", "storage_to_cache", "cache_to_watcher"} {
			vec.WithLabelValues(gr.Group, gr.Resource, stage)
		}
	}
	if got, w := exposition(t, reg, name), exposition(t, want, name); got != w {
		t.Fatalf("at start:\n%s\nwant\n%s", got, w)
	}

	// Bounds, the values around them, negative durations, beyond 5 s.
	values := []time.Duration{-time.Second, 0, 100 * time.Microsecond, 100*time.Microsecond + 1, time.Millisecond,
		25 * time.Millisecond, 2500 * time.Millisecond, 5 * time.Second, 5*time.Second + 1, time.Minute}
	w1, w2 := pods.NewCounter(), pods.NewCounter()
	for i, v := range values {
		w := values[(i+3)%len(values)]
		tot := values[(i+7)%len(values)]
		c := w1
		if i%3 == 0 {
			c = w2
		}
		c.Delivered(v, w, tot)
		vec.WithLabelValues("", "pods", "storage_to_cache").Observe(max(v, 0).Seconds())
		vec.WithLabelValues("", "pods", "cache_to_watcher").Observe(max(w, 0).Seconds())
		vec.WithLabelValues("", "pods", "total").Observe(max(tot, 0).Seconds())
	}
	deps.NewCounter() // a watcher that delivered nothing
	check := func(when string) {
		t.Helper()
		gotText, gotSums := sums(exposition(t, reg, name))
		wantText, wantSums := sums(exposition(t, want, name))
		if gotText != wantText {
			t.Fatalf("%s:\n%s\nwant\n%s", when, gotText, wantText)
		}
		if len(gotSums) != len(wantSums) {
			t.Fatalf("%s: sums %q, want %q", when, gotSums, wantSums)
		}
		for i := range gotSums {
			g, w := lastFloat(t, gotSums[i]), lastFloat(t, wantSums[i])
			if d := g - w; d > 1e-9 || d < -1e-9 {
				t.Errorf("%s: sum %q, want %q", when, gotSums[i], wantSums[i])
			}
		}
	}
	check("two watchers delivering")
	w1.Close()
	check("one of them ended")
	w1.Close() // again: nothing changes
	w2.Close()
	check("both ended")
}

// sums splits an exposition into its _sum lines and the rest: sums are
// added in nanoseconds, client_golang's in float seconds, so they are
// compared apart, to the nanosecond.
func sums(text string) (string, []string) {
	var rest, sums []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "_sum{") {
			sums = append(sums, l)
			continue
		}
		rest = append(rest, l)
	}
	return strings.Join(rest, "\n"), sums
}

// lastFloat is the number at the end of an exposition line.
func lastFloat(t *testing.T, line string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
	if err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	return f
}
