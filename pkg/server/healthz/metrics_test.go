package healthz

import (
	"errors"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// gathered reads every sample of name from reg as "label=value,... value".
func gathered(t *testing.T, reg prometheus.Gatherer, name string) []string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	var out []string
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			out = append(out, strings.Join(labels, ",")+" "+formatValue(f.GetType(), m))
		}
	}
	sort.Strings(out)
	return out
}

func formatValue(typ dto.MetricType, m *dto.Metric) string {
	switch typ {
	case dto.MetricType_GAUGE:
		return strconv.FormatFloat(m.GetGauge().GetValue(), 'g', -1, 64)
	case dto.MetricType_COUNTER:
		return strconv.FormatFloat(m.GetCounter().GetValue(), 'g', -1, 64)
	}
	return "?"
}

// TestMetrics covers health.md 35: each evaluated check of an aggregate
// request records kubernetes_healthcheck and kubernetes_healthchecks_total.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	// A second server of the chain shares the registry and the collectors.
	m2, err := NewMetrics(reg)
	if err != nil {
		t.Fatalf("second NewMetrics on the same registry: %v", err)
	}

	var etcdErr error
	etcd := NamedCheck("etcd", func(*http.Request) error { return etcdErr })
	readyz := install(t, "/readyz", HandlerOptions{Metrics: m}, PingHealthz, etcd, failing("shutdown", "x"))
	livez := install(t, "/livez", HandlerOptions{Metrics: m2}, PingHealthz, etcd)

	serve(t, readyz, "GET", "/readyz")                  // ping ok, etcd ok, shutdown error
	serve(t, readyz, "GET", "/readyz?exclude=shutdown") // ping ok, etcd ok; shutdown not evaluated
	serve(t, readyz, "GET", "/readyz/ping")             // single checks record nothing
	serve(t, livez, "GET", "/livez")                    // ping ok, etcd ok
	etcdErr = errors.New("down")
	serve(t, livez, "GET", "/livez?exclude=ping") // etcd error

	wantGauge := []string{
		"name=etcd,type=livez 0",
		"name=etcd,type=readyz 1",
		"name=ping,type=livez 1",
		"name=ping,type=readyz 1",
		"name=shutdown,type=readyz 0",
	}
	if got := gathered(t, reg, "kubernetes_healthcheck"); strings.Join(got, "\n") != strings.Join(wantGauge, "\n") {
		t.Errorf("kubernetes_healthcheck:\ngot  %q\nwant %q", got, wantGauge)
	}
	wantCounter := []string{
		"name=etcd,status=error,type=livez 1",
		"name=etcd,status=success,type=livez 1",
		"name=etcd,status=success,type=readyz 2",
		"name=ping,status=success,type=livez 1",
		"name=ping,status=success,type=readyz 2",
		"name=shutdown,status=error,type=readyz 1",
	}
	if got := gathered(t, reg, "kubernetes_healthchecks_total"); strings.Join(got, "\n") != strings.Join(wantCounter, "\n") {
		t.Errorf("kubernetes_healthchecks_total:\ngot  %q\nwant %q", got, wantCounter)
	}
}

func TestMetricsRegistrationConflict(t *testing.T) {
	reg := prometheus.NewRegistry()
	// Same name, different labels: cannot be reused.
	reg.MustRegister(prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kubernetes_healthcheck", Help: "other"}, []string{"x"}))
	if _, err := NewMetrics(reg); err == nil {
		t.Errorf("got nil error, want a registration error")
	}
}

func TestNilMetrics(t *testing.T) {
	var m *Metrics
	m.observe("ping", "readyz", nil) // must not panic
	unregistered, err := NewMetrics(nil)
	if err != nil || unregistered == nil {
		t.Fatalf("NewMetrics(nil): got %v, %v", unregistered, err)
	}
	unregistered.observe("ping", "readyz", errors.New("x"))
}
