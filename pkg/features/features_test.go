package features

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestRegisterMetricsShared: every registry serves the family with one
// series per gate at its default, and a server's registration does not
// rebuild the series (they are the process's, made once).
func TestRegisterMetricsShared(t *testing.T) {
	regs := []*prometheus.Registry{prometheus.NewRegistry(), prometheus.NewRegistry()}
	for _, reg := range regs {
		if err := RegisterMetrics(reg); err != nil {
			t.Fatal(err)
		}
	}
	for i, reg := range regs {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		if len(mfs) != 1 || mfs[0].GetName() != "kubernetes_feature_enabled" {
			t.Fatalf("registry %d gathers %d families, want kubernetes_feature_enabled alone", i, len(mfs))
		}
		ms := mfs[0].GetMetric()
		if len(ms) != len(defaults) {
			t.Fatalf("registry %d: %d series, want one per gate (%d)", i, len(ms), len(defaults))
		}
		want := map[[2]string]float64{}
		for _, g := range defaults {
			v := 0.0
			if g.Default {
				v = 1
			}
			want[[2]string{g.Name, g.Stage}] = v
		}
		for _, m := range ms {
			var k [2]string
			for _, lp := range m.GetLabel() {
				switch lp.GetName() {
				case "name":
					k[0] = lp.GetValue()
				case "stage":
					k[1] = lp.GetValue()
				}
			}
			if v, ok := want[k]; !ok || v != m.GetGauge().GetValue() {
				t.Errorf("registry %d: series %v = %v, want %v (known: %v)", i, k, m.GetGauge().GetValue(), v, ok)
			}
		}
	}
	// A registration costs the registry's bookkeeping only: with a
	// GaugeVec per registry it was ~2,850 allocations (a child and its
	// label pairs per gate).
	allocs := testing.AllocsPerRun(20, func() {
		if err := RegisterMetrics(prometheus.NewRegistry()); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 200 {
		t.Errorf("RegisterMetrics on a new registry: %.0f allocations, want ≤ 200", allocs)
	}
}
