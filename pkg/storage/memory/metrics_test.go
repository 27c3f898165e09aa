package memory

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/storage"
	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// series returns family name's series as `l1="v1",... value`, sorted.
func series(t testing.TB, reg *prometheus.Registry, name string) []string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			out = append(out, fmt.Sprintf("%s %g", strings.Join(ls, ","), m.GetCounter().GetValue()+m.GetGauge().GetValue()))
		}
	}
	sort.Strings(out)
	return out
}

// TestStoreMetrics: a store that names its resource records its LIST costs
// and its object count (live objects only), until it is closed; the memory
// backend records no etcd_* families.
func TestStoreMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := storagemetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.Metrics = m
	b := newTestBackend(t, cfg)
	r := storagetest.PodResource(storagetest.Codec())
	s := b.Store(Config{Codec: r.Codec, NewFunc: r.NewFunc, NewListFunc: r.NewListFunc,
		GroupResource: schema.GroupResource{Resource: "pods"}, ResourcePrefix: r.Prefix})
	// A store of another resource sharing the prefix's first letters.
	other := b.Store(Config{Codec: r.Codec, NewFunc: r.NewFunc, NewListFunc: r.NewListFunc})
	ctx := context.Background()
	for i, name := range []string{"a", "b", "c"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"i": fmt.Sprint(i)}}}
		if err := s.Create(ctx, "/pods/ns/"+name, pod, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.Create(ctx, "/podsx/ns/z", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "z"}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "/pods/ns/c", &corev1.Pod{}, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	list := &corev1.PodList{}
	sel := storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"i": "0"}), GetAttrs: r.GetAttrs}
	if err := s.GetList(ctx, "/pods", storage.ListOptions{Recursive: true, Predicate: sel}, list); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Count(ctx, "/pods"); err != nil || n != 2 {
		t.Errorf("Count: got %d, %v; want 2", n, err)
	}

	pods := `group="",resource="pods"`
	for _, c := range []struct{ family, want string }{
		{"apiserver_resource_objects", pods + " 2"},
		// storage="memory": kapi's own value (upstream has "etcd" and
		// "watchcache" only).
		{"apiserver_storage_list_total", `group="",index="",resource="pods",storage="memory" 1`},
		{"apiserver_storage_list_fetched_objects_total", `group="",index="",resource="pods",storage="memory" 2`},
		{"apiserver_storage_list_evaluated_objects_total", `group="",resource="pods",storage="memory" 2`},
		{"apiserver_storage_list_returned_objects_total", `group="",resource="pods",storage="memory" 1`},
	} {
		if got := series(t, reg, c.family); len(got) != 1 || got[0] != c.want {
			t.Errorf("%s: got %q, want [%q]", c.family, got, c.want)
		}
	}
	if got := series(t, reg, "etcd_requests_total"); len(got) != 0 {
		t.Errorf("etcd_requests_total: got %q, want none on the memory backend", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := series(t, reg, "apiserver_resource_objects"); len(got) != 0 {
		t.Errorf("after Close: got %q, want no object count", got)
	}
}
