package metricsfilter

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// exposition gathers g as the text /metrics serves.
func exposition(t *testing.T, g prometheus.Gatherer) string {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestFilter: disabled families are left out (but the exempt ones, as
// upstream's raw and custom collectors), label values outside their
// allow-list are served as "unexpected" with the series merged, and the
// meta families count the distinct disabled names and the series made
// "unexpected".
func TestFilter(t *testing.T) {
	reg := prometheus.NewRegistry()
	reqs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "requests_total", Help: "h"}, []string{"verb", "code"})
	lat := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "latency_seconds", Help: "h", Buckets: []float64{1, 2}}, []string{"verb"})
	objs := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "objects", Help: "h"}, []string{"resource"})
	gone := prometheus.NewCounter(prometheus.CounterOpts{Name: "gone_total", Help: "h"})
	goFamily := prometheus.NewGauge(prometheus.GaugeOpts{Name: "go_things", Help: "h"})
	size := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_storage_size_bytes", Help: "h"}, []string{"storage_cluster_id"})
	reg.MustRegister(reqs, lat, objs, gone, goFamily, size)
	reqs.WithLabelValues("GET", "200").Add(2)
	reqs.WithLabelValues("PUT", "200").Add(3)
	reqs.WithLabelValues("DELETE", "200").Add(4)
	reqs.WithLabelValues("GET", "500").Inc()
	lat.WithLabelValues("GET").Observe(0.5)
	lat.WithLabelValues("PUT").Observe(1.5)
	lat.WithLabelValues("DELETE").Observe(3)
	objs.WithLabelValues("pods").Set(5)
	objs.WithLabelValues("secrets").Set(7)
	gone.Inc()
	goFamily.Set(1)
	size.WithLabelValues("etcd-0").Set(10)

	f, err := New(reg, reg, Config{
		Disabled: []string{"gone_total", "go_things", "apiserver_storage_size_bytes", "no_such_total", "gone_total"},
		AllowLists: map[string]string{
			"requests_total,verb":                             "GET",
			"latency_seconds,verb":                            "GET",
			"objects,resource":                                "",
			"apiserver_storage_size_bytes,storage_cluster_id": "x",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second gathering counts nothing more
		got := exposition(t, f)
		for _, want := range []string{
			`requests_total{code="200",verb="GET"} 2`,
			`requests_total{code="200",verb="unexpected"} 7`,
			`requests_total{code="500",verb="GET"} 1`,
			`latency_seconds_bucket{verb="GET",le="1"} 1`,
			`latency_seconds_bucket{verb="unexpected",le="1"} 0`,
			`latency_seconds_bucket{verb="unexpected",le="2"} 1`,
			`latency_seconds_bucket{verb="unexpected",le="+Inf"} 2`,
			`latency_seconds_sum{verb="unexpected"} 4.5`,
			`latency_seconds_count{verb="unexpected"} 2`,
			`objects{resource="unexpected"} 12`,
			"go_things 1",
			`apiserver_storage_size_bytes{storage_cluster_id="etcd-0"} 10`,
			"disabled_metrics_total 4",
			// PUT and DELETE of requests_total and latency_seconds, pods
			// and secrets.
			"cardinality_enforcement_unexpected_categorizations_total 6",
		} {
			if !strings.Contains(got, want+"\n") {
				t.Errorf("missing %q in:\n%s", want, got)
			}
		}
		for _, absent := range []string{"gone_total", `verb="PUT"`, `resource="pods"`} {
			if strings.Contains(got, absent) {
				t.Errorf("%q served:\n%s", absent, got)
			}
		}
	}
	// Without flags: the registry's families as they are, and the meta
	// families at 0.
	reg2 := prometheus.NewRegistry()
	reg2.MustRegister(gone)
	f2, err := New(reg2, reg2, Config{})
	if err != nil {
		t.Fatal(err)
	}
	got := exposition(t, f2)
	for _, want := range []string{"gone_total 1", "disabled_metrics_total 0", "cardinality_enforcement_unexpected_categorizations_total 0"} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}
