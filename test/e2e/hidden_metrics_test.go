package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// hiddenFamilies are the deprecated families kube-apiserver v1.37.2 hides
// and serves again with --show-hidden-metrics-for-version=1.36, with
// their help text as it serves them then (read from the reference
// binary's /metrics) and label names.
var hiddenFamilies = []expectedFamily{
	{Name: "apiserver_storage_objects", Type: "gauge", Labels: []string{"resource"},
		Source: "[STABLE] (Deprecated since 1.34.0) [DEPRECATED, consider using apiserver_resource_objects instead] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1."},
	{Name: "etcd_bookmark_counts", Type: "gauge", Labels: []string{"group", "resource"},
		Source: "[ALPHA] (Deprecated since 1.36.0) Number of etcd bookmarks (progress notify events) split by kind."},
	{Name: "apiserver_cache_list_total", Type: "counter", Labels: []string{"group", "index", "resource"},
		Source: "[ALPHA] (Deprecated since 1.37.0) Number of LIST requests served from watch cache"},
	{Name: "apiserver_cache_list_fetched_objects_total", Type: "counter", Labels: []string{"group", "index", "resource"},
		Source: "[ALPHA] (Deprecated since 1.37.0) Number of objects read from watch cache in the course of serving a LIST request"},
	{Name: "apiserver_cache_list_returned_objects_total", Type: "counter", Labels: []string{"group", "resource"},
		Source: "[ALPHA] (Deprecated since 1.37.0) Number of objects returned for a LIST request from watch cache"},
}

// TestShowHiddenMetrics: with --show-hidden-metrics-for-version=1.36 a
// kapi on etcd serves the five families kube-apiserver v1.37.2 serves
// again with it (help text, type, labels as the reference's), following
// the same data as their replacements (apiserver_resource_objects,
// etcd_bookmark_total, the watch cache's apiserver_storage_list_*);
// without the flag none of them is served (also TestMetricFamilies,
// families.json). A version other than 1.36 is refused before starting,
// with upstream's message.
func TestShowHiddenMetrics(t *testing.T) {
	t.Run("shown", func(t *testing.T) {
		t.Parallel()
		srv := kapitest.Start(t, kapitest.WithEmbeddedEtcd(), kapitest.WithFlags("--show-hidden-metrics-for-version=1.36"))
		cs := kubernetes.NewForConfigOrDie(srv.Config)
		// A list the watch cache serves.
		if _, err := cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{ResourceVersion: "0"}); err != nil {
			t.Fatal(err)
		}
		// Bookmarks come from etcd's progress notifications: wait for one.
		var got map[string]*dto.MetricFamily
		deadline := time.Now().Add(60 * time.Second)
		for {
			got = scrape(t, srv.Config)
			if _, ok := got["etcd_bookmark_counts"]; ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no etcd_bookmark_counts after 60s (etcd_bookmark_total present: %v)", got["etcd_bookmark_total"] != nil)
			}
			time.Sleep(200 * time.Millisecond)
		}
		for _, want := range hiddenFamilies {
			mf, ok := got[want.Name]
			if !ok {
				t.Errorf("%s: missing", want.Name)
				continue
			}
			checkFamily(t, mf, want)
			if mf.GetHelp() != want.Source {
				t.Errorf("%s: help %q, want %q", want.Name, mf.GetHelp(), want.Source)
			}
		}
		// The same counts as the replacements.
		legacy, _ := seriesValue(got["apiserver_storage_objects"], map[string]string{"resource": "namespaces"})
		if v, ok := resourceGauge(got, "apiserver_resource_objects", "", "namespaces"); !ok || v != legacy || v < 4 {
			t.Errorf("namespaces: apiserver_storage_objects %g, apiserver_resource_objects %g (present: %v), want equal and >= 4", legacy, v, ok)
		}
		if n, _ := seriesValue(got["apiserver_cache_list_total"], map[string]string{"group": "", "resource": "namespaces"}); n < 1 {
			t.Errorf("apiserver_cache_list_total of namespaces: %g, want >= 1", n)
		}
	})
	t.Run("absent without the flag", func(t *testing.T) {
		t.Parallel()
		srv := kapitest.Start(t, kapitest.WithEmbeddedEtcd())
		got := scrape(t, srv.Config)
		for _, f := range hiddenFamilies {
			if _, ok := got[f.Name]; ok {
				t.Errorf("%s: served without --show-hidden-metrics-for-version", f.Name)
			}
		}
	})
	t.Run("refused for another version", func(t *testing.T) {
		t.Parallel()
		_, err := kapitest.StartE(t.TempDir(), nil, kapitest.WithFlags("--show-hidden-metrics-for-version=1.35"))
		const want = `metrics.showHiddenMetricsForVersion: Invalid value: "1.35": must be omitted or have the value '1.36'; only the previous minor version is allowed`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want %q", err, want)
		}
	})
}
