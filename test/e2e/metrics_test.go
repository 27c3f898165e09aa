package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/internal/testaudit"
	"github.com/kapi-dev/kapi/kapitest"
)

// expectedFamily is one entry of testdata/metrics/families.json.
type expectedFamily struct {
	Name     string    `json:"name"`
	Type     string    `json:"type"`
	Labels   []string  `json:"labels"`
	Buckets  []float64 `json:"buckets"`
	Source   string    `json:"source"`
	Backends []string  `json:"backends"`
}

func loadFamilies(t *testing.T) []expectedFamily {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "metrics", "families.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Families []expectedFamily `json:"families"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Families
}

// TestMetricFamilies runs create/list/get/watch/update/delete traffic
// (plus a dry run, an admission rejection and aggregated discovery)
// against a kapi with auditing on, on each storage backend, scrapes
// /metrics and checks that every family of testdata/metrics/families.json
// is there with upstream's type, label names and buckets, and that the
// traffic shows in it.
func TestMetricFamilies(t *testing.T) {
	families := loadFamilies(t)
	for _, backend := range []string{"memory", "etcd"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			opts := []kapitest.Option{kapitest.WithOptions(func(o *kapitest.Options) {
				o.AuditLogPath = filepath.Join(t.TempDir(), "audit.log")
				o.Flags = append(o.Flags, "--audit-policy-file="+testaudit.MetadataPolicy(t))
			})}
			if backend == "etcd" {
				opts = append(opts, kapitest.WithEmbeddedEtcd())
			}
			srv := kapitest.Start(t, opts...)
			stopWatch := metricsTraffic(t, srv.Config)
			got := scrape(t, srv.Config) // while the watch is open
			stopWatch()

			for _, want := range families {
				mf, ok := got[want.Name]
				if !slices.Contains(want.Backends, backend) {
					if ok {
						t.Errorf("%s: present, but the %s backend should not have it", want.Name, backend)
					}
					continue
				}
				if !ok {
					t.Errorf("%s: missing (source: %s)", want.Name, want.Source)
					continue
				}
				checkFamily(t, mf, want)
			}
			checkTrafficSeries(t, got, backend)
		})
	}
}

// checkFamily compares a scraped family with its expectation.
func checkFamily(t *testing.T, mf *dto.MetricFamily, want expectedFamily) {
	t.Helper()
	if got := strings.ToLower(mf.GetType().String()); got != want.Type {
		t.Errorf("%s: got type %s, want %s", want.Name, got, want.Type)
	}
	if len(mf.GetMetric()) == 0 {
		t.Errorf("%s: no series", want.Name)
	}
	for _, m := range mf.GetMetric() {
		var names []string
		for _, l := range m.GetLabel() {
			names = append(names, l.GetName())
		}
		sort.Strings(names)
		if !slices.Equal(names, want.Labels) {
			t.Errorf("%s: got labels %v, want %v", want.Name, names, want.Labels)
			return
		}
		if want.Type != "histogram" {
			continue
		}
		var bounds []float64
		for _, b := range m.GetHistogram().GetBucket() {
			if !math.IsInf(b.GetUpperBound(), 1) { // the text format's +Inf bucket
				bounds = append(bounds, b.GetUpperBound())
			}
		}
		if !slices.Equal(bounds, want.Buckets) {
			t.Errorf("%s: got buckets %v, want %v", want.Name, bounds, want.Buckets)
			return
		}
	}
}

// metricsTraffic makes the requests whose metrics the test looks for. It
// leaves a watch open, which the returned function stops.
func metricsTraffic(t *testing.T, cfg *rest.Config) (stopWatch func()) {
	t.Helper()
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cfg)
	ns := "metrics"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps(ns)
	for i := range 3 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"k": "v"}}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A dry run, and a create NamespaceLifecycle rejects.
	dry := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}}
	if _, err := cms.Create(ctx, dry, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps("no-such-namespace").Create(ctx, dry, metav1.CreateOptions{}); err == nil {
		t.Fatal("create in a missing namespace: got no error")
	}
	// Lists: consistent (from the watch cache on etcd) and at any state.
	if _, err := cms.List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.List(ctx, metav1.ListOptions{ResourceVersion: "0"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(ctx, "cm-0", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	// A watch that gets the current objects (initial events), an update
	// and a delete.
	w, err := cms.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-1"}, Data: map[string]string{"k": "w"}}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "cm-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	seen := map[watch.EventType]int{}
	timeout := time.After(30 * time.Second)
	for seen[watch.Deleted] == 0 {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch ended early")
			}
			seen[ev.Type]++
		case <-timeout:
			t.Fatalf("timed out waiting for the DELETED event; saw %v", seen)
		}
	}
	if seen[watch.Added] < 3 || seen[watch.Modified] < 1 {
		t.Errorf("watch events: got %v, want 3 ADDED (initial), 1 MODIFIED, 1 DELETED", seen)
	}
	// Aggregated discovery is instrumented (legacy discovery is not).
	_, err = cs.CoreV1().RESTClient().Get().AbsPath("/apis").
		SetHeader("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A Service (a ClusterIP allocation) and a list of the deprecated
	// v1 Endpoints.
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Endpoints(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	return w.Stop
}

// scrape reads /metrics with the admin credentials.
func scrape(t *testing.T, cfg *rest.Config) map[string]*dto.MetricFamily {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(cfg)
	body, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").SetHeader("Accept", "text/plain").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return families
}

// checkTrafficSeries checks that the traffic of metricsTraffic shows in
// the series' values.
func checkTrafficSeries(t *testing.T, got map[string]*dto.MetricFamily, backend string) {
	t.Helper()
	cm := map[string]string{"group": "", "resource": "configmaps"}
	checks := []struct {
		family  string
		labels  map[string]string
		atLeast float64
	}{
		{"apiserver_request_total", map[string]string{"verb": "POST", "resource": "configmaps", "scope": "resource", "code": "201", "dry_run": "", "component": "apiserver"}, 3},
		{"apiserver_request_total", map[string]string{"verb": "POST", "resource": "configmaps", "code": "201", "dry_run": "All"}, 1},
		{"apiserver_request_total", map[string]string{"verb": "POST", "resource": "configmaps", "code": "404"}, 1},
		{"apiserver_request_total", map[string]string{"verb": "LIST", "resource": "configmaps", "scope": "namespace"}, 2},
		{"apiserver_request_total", map[string]string{"verb": "GET", "subresource": "apis", "component": "apiserver"}, 1},
		{"apiserver_request_total", map[string]string{"verb": "GET", "subresource": "/readyz", "component": ""}, 1},
		{"apiserver_longrunning_requests", map[string]string{"verb": "WATCH", "resource": "configmaps"}, 1},
		{"apiserver_watch_events_total", map[string]string{"group": "", "version": "v1", "kind": "ConfigMap"}, 5},
		{"apiserver_resource_objects", cm, 2},
		{"apiserver_resource_objects", map[string]string{"group": "apiextensions.k8s.io", "resource": "customresourcedefinitions"}, 0},
		{"apiserver_admission_controller_admission_duration_seconds", map[string]string{"name": "NamespaceLifecycle", "operation": "CREATE", "rejected": "true", "type": "validate"}, 1},
		{"apiserver_admission_step_admission_duration_seconds", map[string]string{"operation": "CREATE", "rejected": "false", "type": "validate"}, 4},
		{"apiserver_audit_level_total", map[string]string{"level": "Metadata"}, 10},
		{"apiserver_audit_event_total", nil, 10},
	}
	if backend == "etcd" {
		checks = append(checks, []struct {
			family  string
			labels  map[string]string
			atLeast float64
		}{
			{"etcd_request_duration_seconds", map[string]string{"operation": "create", "group": "", "resource": "configmaps"}, 3},
			{"etcd_request_duration_seconds", map[string]string{"operation": "update", "group": "", "resource": "configmaps"}, 1},
			{"etcd_request_duration_seconds", map[string]string{"operation": "delete", "group": "", "resource": "configmaps"}, 1},
			{"apiserver_storage_size_bytes", map[string]string{"storage_cluster_id": "etcd-0"}, 1},
			{"apiserver_storage_events_received_total", cm, 5},
			{"apiserver_watch_cache_events_dispatched_total", cm, 5},
			{"apiserver_watch_cache_initializations_total", cm, 1},
			{"apiserver_watch_cache_resource_version", cm, 1},
			{"apiserver_init_events_total", cm, 3},
			{"apiserver_storage_list_total", map[string]string{"group": "", "resource": "configmaps", "index": "", "storage": "watchcache"}, 2},
			{"apiserver_watch_cache_consistent_read_total", map[string]string{"group": "", "resource": "configmaps", "success": "true", "fallback": "false"}, 1},
		}...)
	}
	for _, c := range checks {
		v, ok := seriesValue(got[c.family], c.labels)
		if !ok {
			t.Errorf("%s%v: no series", c.family, c.labels)
			continue
		}
		if v < c.atLeast {
			t.Errorf("%s%v: got %g, want at least %g", c.family, c.labels, v, c.atLeast)
		}
	}
}

// seriesValue sums the values (counts, for histograms and summaries) of
// the series of mf whose labels include labels; false if none does.
func seriesValue(mf *dto.MetricFamily, labels map[string]string) (float64, bool) {
	if mf == nil {
		return 0, false
	}
	var sum float64
	found := false
	for _, m := range mf.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range labels {
			if got, ok := have[k]; !ok || got != v {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		case m.Summary != nil:
			sum += float64(m.GetSummary().GetSampleCount())
		case m.Untyped != nil:
			sum += m.GetUntyped().GetValue()
		}
	}
	return sum, found
}
