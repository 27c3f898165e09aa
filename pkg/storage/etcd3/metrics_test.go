package etcd3

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// series returns family name's series as `l1="v1",... value` (histograms:
// their count), sorted.
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
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			v := m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
			out = append(out, fmt.Sprintf("%s %g", strings.Join(labels, ","), v))
		}
	}
	sort.Strings(out)
	return out
}

// TestStoreMetrics checks that each etcd request is recorded under
// upstream's operation name, with the LIST costs, the events received by
// watches, and the object count.
func TestStoreMetrics(t *testing.T) {
	reg, _, s := configMapStoreWithMetrics(t, "configmaps")
	ctx := context.Background()
	rev, err := s.CurrentRevision(ctx) // recorded as "getCurrentResourceVersion", as upstream
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ctx, "/configmaps", storage.ListOptions{Recursive: true, ResourceVersion: fmt.Sprint(rev)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	mustCreate(t, s, newCM("a", nil, nil))
	mustCreate(t, s, newCM("b", nil, nil))
	updateData(t, s, "a", "k", "v") // a get, then an update
	if err := s.Get(ctx, cmKey("b"), storage.GetOptions{}, &corev1.ConfigMap{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, cmKey("b"), &corev1.ConfigMap{}, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	list := &corev1.ConfigMapList{}
	if err := s.GetList(ctx, "/configmaps", storage.ListOptions{Recursive: true}, list); err != nil {
		t.Fatal(err)
	}
	// A page with a selector is read page by page ("list"), a list of one
	// key is a "get".
	sel := storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"x": "y"}), Field: fields.Everything(), Limit: 1}
	if err := s.GetList(ctx, "/configmaps", storage.ListOptions{Recursive: true, Predicate: sel}, &corev1.ConfigMapList{}); err != nil {
		t.Fatal(err)
	}
	if err := s.GetList(ctx, cmKey("a"), storage.ListOptions{}, &corev1.ConfigMapList{}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Count(ctx, "/configmaps"); err != nil || n != 1 {
		t.Errorf("Count: got %d, %v; want 1", n, err)
	}
	// A watch with initial events reads them as a list ("listStream"),
	// one of a single key with a "get".
	for _, key := range []string{"/configmaps", cmKey("a")} {
		initial := true
		w2, err := s.Watch(ctx, key, storage.ListOptions{Recursive: key == "/configmaps", SendInitialEvents: &initial})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-w2.ResultChan():
			if ev.Type != watch.Added {
				t.Fatalf("watch %s: got %s, want ADDED", key, ev.Type)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("watch %s: no initial event", key)
		}
		w2.Stop()
	}
	// The watch's events: ADDED a, ADDED b, MODIFIED a, DELETED b.
	for i := range 4 {
		select {
		case ev := <-w.ResultChan():
			if ev.Type == watch.Error {
				t.Fatalf("watch error: %v", ev.Object)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("timed out waiting for watch event %d", i)
		}
	}

	op := func(o string, n int) string {
		return fmt.Sprintf(`group="",operation=%q,resource="configmaps" %d`, o, n)
	}
	// get: the explicit one, the update's read, the delete's read, the
	// list and the watch of one key; list: the page with a selector;
	// listStream: the list and the recursive watch's initial events.
	want := []string{op("create", 2), op("delete", 1), op("get", 5), op("getCurrentResourceVersion", 1), op("list", 1),
		op("listStream", 2), op("listWithCount", 1), op("update", 1)}
	for _, name := range []string{"etcd_request_duration_seconds", "etcd_requests_total"} {
		if got := series(t, reg, name); strings.Join(got, ";") != strings.Join(want, ";") {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
	cms := `group="",resource="configmaps"`
	for _, c := range []struct{ family, want string }{
		{"apiserver_storage_events_received_total", cms + " 4"},
		// Labelled as k8s.io/apiserver v0.37.2's storage list families.
		// Three lists of "a": the selector's returns nothing.
		{"apiserver_storage_list_total", `group="",index="",resource="configmaps",storage="etcd" 3`},
		{"apiserver_storage_list_fetched_objects_total", `group="",index="",resource="configmaps",storage="etcd" 3`},
		{"apiserver_storage_list_evaluated_objects_total", `group="",resource="configmaps",storage="etcd" 3`},
		{"apiserver_storage_list_returned_objects_total", `group="",resource="configmaps",storage="etcd" 2`},
	} {
		if got := series(t, reg, c.family); len(got) != 1 || got[0] != c.want {
			t.Errorf("%s: got %q, want [%q]", c.family, got, c.want)
		}
	}
	if got := series(t, reg, "etcd_request_errors_total"); len(got) != 0 {
		t.Errorf("errors: got %q, want none", got)
	}
}

// TestSizeCollector checks the database size families against etcd's own
// status, read just before and just after the scrape (the database may
// grow meanwhile).
func TestSizeCollector(t *testing.T) {
	srv := startEtcd(t)
	reg := prometheus.NewRegistry()
	ep := srv.Endpoints()[0]
	reg.MustRegister(NewSizeCollector(srv.Client(), ep))
	dbSize := func() float64 {
		st, err := srv.Client().Status(context.Background(), ep)
		if err != nil {
			t.Fatal(err)
		}
		return float64(st.DbSize)
	}
	before := dbSize()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	after := dbSize()
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			l := m.GetLabel()
			if len(l) != 1 {
				t.Fatalf("%s: got labels %v, want one", mf.GetName(), l)
			}
			got[mf.GetName()+" "+l[0].GetName()+"="+l[0].GetValue()] = m.GetGauge().GetValue()
		}
	}
	for _, k := range []string{"apiserver_storage_size_bytes storage_cluster_id=etcd-0"} {
		v, ok := got[k]
		if !ok || v < before || v > after || v <= 0 {
			t.Errorf("%s: got %g (present: %v), want between %g and %g", k, v, ok, before, after)
		}
	}
	if len(got) != 1 {
		t.Errorf("got %v, want the one series (v1.37 has no apiserver_storage_db_total_size_in_bytes)", got)
	}
}
