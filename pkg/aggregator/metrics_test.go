package aggregator

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAvailabilityMetrics follows one remote APIService through
// kube-aggregator v0.37's availability metrics
// (pkg/controllers/status/metrics): aggregator_unavailable_apiservice is
// set on every sync (1 while not Available, 0 once Available, 0 for every
// local APIService) and dropped with the APIService;
// aggregator_unavailable_apiservice_total counts only the transitions
// from Available to not, by the new condition's reason (a new APIService
// that starts unavailable is not counted).
func TestAvailabilityMetrics(t *testing.T) {
	p := newPKI(t)
	ts := startServer(t, options{pki: p, period: 100 * time.Millisecond, discoveryTimeout: 2 * time.Second})
	c := ts.client(t)
	ctx := context.Background()
	name := version + "." + group

	// The local APIServices of the built-in group-versions.
	waitMetrics(t, ts.metrics, "aggregator_unavailable_apiservice", []string{`{name="v1."} 0`, `{name="v1.apps"} 0`})

	if _, err := c.ApiregistrationV1().APIServices().Create(ctx, remoteAPIService(group, version, "wardle", "api", p.servingCA.pem), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, c, name, 10*time.Second, reason("ServiceNotFound"))
	waitMetrics(t, ts.metrics, "aggregator_unavailable_apiservice", []string{`{name="v1."} 0`, `{name="v1.apps"} 0`, `{name="` + name + `"} 1`})
	waitMetrics(t, ts.metrics, "aggregator_unavailable_apiservice_total", nil)

	// Available...
	w := newWardle()
	b := startBackend(t, p, "wardle", "api", w, "")
	ts.svcs.setService("wardle", "api")
	ts.svcs.setEndpoint("wardle", "api", b.addr)
	waitCondition(t, c, name, 10*time.Second, reason("Passed"))
	waitMetrics(t, ts.metrics, "aggregator_unavailable_apiservice", []string{`{name="v1."} 0`, `{name="v1.apps"} 0`, `{name="` + name + `"} 0`})

	// ... then not: counted once, by reason, however often probed.
	b.srv.Close()
	waitCondition(t, c, name, 10*time.Second, reason("FailedDiscoveryCheck"))
	waitMetrics(t, ts.metrics, "aggregator_unavailable_apiservice_total", []string{`{name="` + name + `",reason="FailedDiscoveryCheck"} 1`})
	ts.svcs.setEndpoint("wardle", "api", "")
	waitCondition(t, c, name, 10*time.Second, reason("EndpointsNotFound"))
	time.Sleep(300 * time.Millisecond) // a few more probes
	waitMetrics(t, ts.metrics, "aggregator_unavailable_apiservice_total", []string{`{name="` + name + `",reason="FailedDiscoveryCheck"} 1`})
	waitMetrics(t, ts.metrics, "aggregator_unavailable_apiservice", []string{`{name="v1."} 0`, `{name="v1.apps"} 0`, `{name="` + name + `"} 1`})

	// Deleted: its gauge goes, the counter stays.
	if err := c.ApiregistrationV1().APIServices().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitMetrics(t, ts.metrics, "aggregator_unavailable_apiservice", []string{`{name="v1."} 0`, `{name="v1.apps"} 0`})
	waitMetrics(t, ts.metrics, "aggregator_unavailable_apiservice_total", []string{`{name="` + name + `",reason="FailedDiscoveryCheck"} 1`})
}

// waitMetrics waits (up to 5s) until family's series in reg are exactly
// want, each written `{labels} value` with the labels sorted by name.
func waitMetrics(t *testing.T, reg *prometheus.Registry, family string, want []string) {
	t.Helper()
	sort.Strings(want)
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := series(t, reg, family)
		if strings.Join(got, "\n") == strings.Join(want, "\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s:\n%s\nwant:\n%s", family, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func series(t *testing.T, reg *prometheus.Registry, family string) []string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			out = append(out, fmt.Sprintf("{%s} %v", strings.Join(labels, ","), value(m)))
		}
	}
	sort.Strings(out)
	return out
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	}
	return 0
}
