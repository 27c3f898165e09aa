package app

import (
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// familyShapes is what a scrape shows of each family but its values: name,
// type, help and each metric's label names.
func familyShapes(t *testing.T, r *prometheus.Registry) map[string]string {
	t.Helper()
	mfs, err := r.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, mf := range mfs {
		s := mf.GetType().String() + " " + mf.GetHelp()
		for _, m := range mf.Metric {
			s += " {"
			for _, l := range m.Label {
				s += l.GetName() + ","
			}
			s += "}"
		}
		out[mf.GetName()] = s
	}
	return out
}

// TestLazyGoCollector: registering the lazy Go collector does not make
// client_golang's (a few allocations, not the ~thousand of matching the
// runtime's metrics), and a scrape gathers the same families as the Go
// collector registered directly.
func TestLazyGoCollector(t *testing.T) {
	allocs := testing.AllocsPerRun(20, func() {
		prometheus.NewRegistry().MustRegister(newLazyGoCollector())
	})
	eager := testing.AllocsPerRun(20, func() {
		prometheus.NewRegistry().MustRegister(collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsAll)))
	})
	t.Logf("allocations to register: lazy %.0f, eager %.0f", allocs, eager)
	if allocs > 50 || allocs*10 > eager {
		t.Errorf("registering the lazy Go collector allocates %.0f times (the Go collector itself %.0f): it is not lazy", allocs, eager)
	}

	lazy := prometheus.NewRegistry()
	lazy.MustRegister(newLazyGoCollector())
	direct := prometheus.NewRegistry()
	direct.MustRegister(collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsAll)))
	got, want := familyShapes(t, lazy), familyShapes(t, direct)
	if len(want) < 50 {
		t.Fatalf("the Go collector gathered %d families, want all of the runtime's", len(want))
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range want {
			if !yield(k) {
				return
			}
		}
	}) {
		if got[name] != want[name] {
			t.Errorf("%s: lazy %q, direct %q", name, got[name], want[name])
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: gathered by the lazy collector only", name)
		}
	}
	// A second scrape uses the same collector.
	if again := familyShapes(t, lazy); len(again) != len(got) {
		t.Errorf("second scrape: %d families, first %d", len(again), len(got))
	}
	// Registered beside the process collector, as NewConfig does.
	r := prometheus.NewRegistry()
	r.MustRegister(newLazyGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if _, err := r.Gather(); err != nil {
		t.Fatal(err)
	}
}
