package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestHiddenMetricsTotal: hidden_metrics_total counts, as kube-apiserver
// v1.37.2's component-base does, the families not registered because
// they are hidden (the five deprecated storage families) or disabled.
// Values read from the reference binary with the same flags: 5 without
// flags, 0 with --show-hidden-metrics-for-version=1.36, 6 with
// --disabled-metrics=apiserver_request_total,etcd_bookmark_counts,go_goroutines,no_such_metric
// (the Go runtime's families are not component-base's, unknown names are
// not registered, etcd_bookmark_counts is one of the five), 2 with both.
// HELP and TYPE lines as the reference's.
func TestHiddenMetricsTotal(t *testing.T) {
	const disabled = "--disabled-metrics=apiserver_request_total,etcd_bookmark_counts,go_goroutines,no_such_metric"
	for _, tc := range []struct {
		name  string
		flags []string
		want  int
	}{
		{"plain", nil, 5},
		{"shown", []string{"--show-hidden-metrics-for-version=1.36"}, 0},
		{"disabled", []string{disabled}, 6},
		{"disabled-and-shown", []string{disabled, "--show-hidden-metrics-for-version=1.36"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := kapitest.Start(t, kapitest.WithEmbeddedEtcd(), kapitest.WithFlags(tc.flags...))
			cs := kubernetes.NewForConfigOrDie(srv.Config)
			if _, err := cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
			want := []string{
				"# HELP hidden_metrics_total [BETA] The count of hidden metrics.",
				"# TYPE hidden_metrics_total counter",
				fmt.Sprintf("hidden_metrics_total %d", tc.want),
			}
			for range 2 { // the value holds from one scrape to the next
				if got := familyLines(metricsText(t, srv.Config), "hidden_metrics_total"); !slices.Equal(got, want) {
					t.Errorf("got\n%q\nwant\n%q", got, want)
				}
			}
		})
	}
}
