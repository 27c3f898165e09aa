package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// comparisons returns apiserver_request_timestamp_comparison_time's count
// per code_path.
func comparisons(t *testing.T, srv *kapitest.Server) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, m := range scrape(t, srv.Config)["apiserver_request_timestamp_comparison_time"].GetMetric() {
		out[m.GetLabel()[0].GetValue()] = m.GetHistogram().GetSampleCount()
	}
	return out
}

// TestTimestampComparison runs the LimitRange updates compared with
// kube-apiserver v1.37.2 in session 23 and checks the code paths recorded
// (the reference's, step by step) and that an update changing nothing but
// the managed fields time (cpu 1 to 1000m, a second later) leaves the
// object alone (same resourceVersion and time), as upstream's. kapi's own
// controllers update objects meanwhile, so the fast and slow counts are
// checked as at least the reference's increments; equal_objects exactly.
func TestTimestampComparison(t *testing.T) {
	srv := kapitest.Start(t)
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	lrs := cs.CoreV1().LimitRanges("default")
	lr := func(cpu string) *corev1.LimitRange {
		return &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "ts"},
			Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
				Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}
	}
	created, err := lrs.Create(ctx, lr("1"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	step := func(name string, update func() *corev1.LimitRange, want map[string]uint64) *corev1.LimitRange {
		t.Helper()
		before := comparisons(t, srv)
		got := update()
		after := comparisons(t, srv)
		for path, n := range want {
			d := after[path] - before[path]
			if path == "equal_objects" && d != n || d < n {
				t.Errorf("%s: %s went up by %d, want %d", name, path, d, n)
			}
		}
		if d := after["equal_objects"] - before["equal_objects"]; want["equal_objects"] == 0 && d != 0 {
			t.Errorf("%s: equal_objects went up by %d, want 0", name, d)
		}
		return got
	}
	put := func(o *corev1.LimitRange, rv string) func() *corev1.LimitRange {
		return func() *corev1.LimitRange {
			o.ResourceVersion = rv
			out, err := lrs.Update(ctx, o, metav1.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
	}
	// client-go would send 1000m as 1: the body is written out.
	putRaw := func(body string) func() *corev1.LimitRange {
		return func() *corev1.LimitRange {
			out := &corev1.LimitRange{}
			err := cs.CoreV1().RESTClient().Put().AbsPath("/api/v1/namespaces/default/limitranges/ts").
				SetHeader("Content-Type", "application/json").Body([]byte(body)).Do(ctx).Into(out)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
	}
	time.Sleep(1100 * time.Millisecond) // managed fields times have seconds
	same := step("cpu 1000m", putRaw(`{"apiVersion":"v1","kind":"LimitRange","metadata":{"name":"ts","resourceVersion":"`+created.ResourceVersion+
		`"},"spec":{"limits":[{"type":"Container","max":{"cpu":"1000m"}}]}}`), map[string]uint64{"equal_objects": 1})
	if same.ResourceVersion != created.ResourceVersion || !same.ManagedFields[0].Time.Equal(created.ManagedFields[0].Time) {
		t.Errorf("cpu 1000m: resourceVersion %s, time %v; want the create's %s, %v",
			same.ResourceVersion, same.ManagedFields[0].Time, created.ResourceVersion, created.ManagedFields[0].Time)
	}
	time.Sleep(1100 * time.Millisecond)
	two := step("cpu 2", put(lr("2"), same.ResourceVersion), map[string]uint64{"unequal_objects_slow": 1})
	again := step("cpu 2 again", put(lr("2"), two.ResourceVersion), map[string]uint64{"unequal_objects_fast": 1})
	labelled := lr("2")
	labelled.Labels = map[string]string{"a": "b"}
	step("a label", put(labelled, again.ResourceVersion), map[string]uint64{"unequal_objects_fast": 1})
	// A conflict is not compared.
	before := comparisons(t, srv)
	if _, err := lrs.Update(ctx, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "ts", ResourceVersion: created.ResourceVersion}, Spec: lr("3").Spec}, metav1.UpdateOptions{}); err == nil {
		t.Error("stale update: no conflict")
	}
	if after := comparisons(t, srv); after["equal_objects"] != before["equal_objects"] {
		t.Errorf("stale update: counts %v -> %v", before, after)
	}
}
