package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestMetricsFilterFlags: kapi takes component-base's --disabled-metrics
// and --allow-metric-labels-manifest as kube-apiserver v1.37.2 does (seen
// on the reference binary with the same flags): a disabled family is not
// served, but the Go runtime's and the process's are (upstream registers
// them raw); label values outside an allow-list are served as
// "unexpected"; disabled_metrics_total counts the distinct names given,
// cardinality_enforcement_unexpected_categorizations_total is counting.
func TestMetricsFilterFlags(t *testing.T) {
	manifest := filepath.Join(t.TempDir(), "allow.yaml")
	if err := os.WriteFile(manifest, []byte(`"apiserver_request_total,verb": "GET"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := kapitest.Start(t, kapitest.WithFlags(
		"--disabled-metrics=apiserver_request_duration_seconds,go_goroutines,process_open_fds,no_such_metric,apiserver_request_duration_seconds",
		"--allow-metric-labels-manifest="+manifest))
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	if _, err := cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	got := scrape(t, srv.Config)
	for _, name := range []string{"apiserver_request_duration_seconds"} {
		if _, ok := got[name]; ok {
			t.Errorf("%s served, disabled", name)
		}
	}
	for _, name := range []string{"go_goroutines", "process_open_fds", "apiserver_request_total"} {
		if _, ok := got[name]; !ok {
			t.Errorf("%s not served", name)
		}
	}
	if v, ok := seriesValue(got["disabled_metrics_total"], nil); !ok || v != 4 {
		t.Errorf("disabled_metrics_total: %g (served: %v), want 4", v, ok)
	}
	if v, ok := seriesValue(got["cardinality_enforcement_unexpected_categorizations_total"], nil); !ok || v < 1 {
		t.Errorf("cardinality_enforcement_unexpected_categorizations_total: %g (served: %v), want at least 1", v, ok)
	}
	verbs := map[string]bool{}
	for _, m := range got["apiserver_request_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "verb" {
				verbs[l.GetValue()] = true
			}
		}
	}
	if len(verbs) != 2 || !verbs["GET"] || !verbs["unexpected"] {
		t.Errorf("apiserver_request_total verbs: %v, want GET and unexpected (LIST)", verbs)
	}
}
