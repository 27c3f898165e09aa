package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// resourceGauge is family's value for group and resource (false: no such
// series).
func resourceGauge(got map[string]*dto.MetricFamily, family, group, resource string) (float64, bool) {
	for _, m := range got[family].GetMetric() {
		var g, r string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "group":
				g = l.GetValue()
			case "resource":
				r = l.GetValue()
			}
		}
		if g == group && r == resource {
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// TestResourceSizeEstimate checks apiserver_resource_size_estimate_bytes
// on the etcd backend: a series per cached resource with upstream's
// labels, positive for the bootstrap namespaces, and following the
// configmaps written (a 200 kB one raises the estimate by at least its
// data; its delete takes it back), as the watch cache's etcd watch
// reports their stored sizes; events, without a watch cache, -1 once
// there are some (upstream's). The memory backend has no such family
// (families.json).
func TestResourceSizeEstimate(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithEmbeddedEtcd())
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	const family = "apiserver_resource_size_estimate_bytes"
	// waitFor scrapes until cond holds for the configmaps' estimate.
	waitFor := func(what string, cond func(v float64) bool) float64 {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			got := scrape(t, srv.Config)
			v, ok := resourceGauge(got, family, "", "configmaps")
			if ok && cond(v) {
				return v
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: configmaps estimate %g (present: %v)", what, v, ok)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	got := scrape(t, srv.Config)
	mf, ok := got[family]
	if !ok {
		t.Fatalf("%s: missing", family)
	}
	checkFamily(t, mf, expectedFamily{Name: family, Type: "gauge", Labels: []string{"group", "resource"}})
	if v, ok := resourceGauge(got, family, "", "namespaces"); !ok || v <= 0 {
		t.Errorf("namespaces: got %g (present: %v), want > 0", v, ok)
	}
	if v, ok := resourceGauge(got, family, "apiextensions.k8s.io", "customresourcedefinitions"); !ok || v != 0 {
		t.Errorf("customresourcedefinitions (none stored): got %g (present: %v), want 0", v, ok)
	}

	before := waitFor("before", func(float64) bool { return true })
	big := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: "default"},
		Data: map[string]string{"k": strings.Repeat("x", 200_000)}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, big, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	after := waitFor("after the create", func(v float64) bool { return v >= before+200_000 })
	if err := cs.CoreV1().ConfigMaps("default").Delete(ctx, "big", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("after the delete", func(v float64) bool { return v < after-190_000 })

	// Events have no watch cache (as upstream's): their count is etcd's,
	// their size unknown, so the estimate is -1 once there are some.
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e1", Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: "default", Name: "big"}, Reason: "Test", Message: "m", Type: "Normal"}
	if _, err := cs.CoreV1().Events("default").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got = scrape(t, srv.Config)
	if v, ok := resourceGauge(got, "apiserver_resource_objects", "", "events"); !ok || v < 1 {
		t.Errorf("apiserver_resource_objects of events: got %g (present: %v), want >= 1", v, ok)
	}
	if v, ok := resourceGauge(got, family, "", "events"); !ok || v != -1 {
		t.Errorf("%s of events: got %g (present: %v), want -1", family, v, ok)
	}
}
