package cacher

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/storage"
	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
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

// TestCacherMetrics checks what the watch cache records: its
// initialization, capacity and revision, the events it receives and
// dispatches, initial events, slow watchers cut off, LISTs served from
// memory, consistent reads and their wait, and its object count (dropped
// on Stop).
func TestCacherMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := storagemetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	e := newPodEnv(t, envOptions{cacher: func(c *Config) {
		c.Metrics = m
		c.GroupResource = schema.GroupResource{Resource: "pods"}
		c.WatcherBuffer = 1
		c.EventWindow = 4
		c.DispatchBudget = -1 // a full buffer: lagging at once
	}})
	pods := `group="",resource="pods"`
	if got := series(t, reg, "apiserver_watch_cache_initializations_total"); len(got) != 1 || got[0] != pods+" 1" {
		t.Errorf("initializations: got %q, want 1", got)
	}

	e.create("a", nil)
	e.create("b", map[string]string{"x": "y"})
	// A watch that reads its two initial events, and one that does not
	// read yet: their buffers of 1 overflow, they lag; when they read
	// again, their next events have left the window: they are cut off.
	reader := e.watch("", storage.ListOptions{})
	for range 2 {
		nextEvent(t, reader)
	}
	slow := e.watch("", storage.ListOptions{})
	for i := range 4 {
		e.create(fmt.Sprintf("p%d", i), nil)
	}
	last := e.relabel("a", map[string]string{"k": "v"})
	e.delete("b")
	e.waitRevision(rvOf(t, last) + 1)
	e.c.forgetBefore(rvOf(t, last) + 1)
	expectClosed(t, reader)
	expectClosed(t, slow)

	list := &corev1.PodList{}
	if err := e.c.GetList(e.ctx, "/pods", storage.ListOptions{Recursive: true,
		Predicate: storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"k": "v"})}}, list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("got %d pods, want 1", len(list.Items))
	}

	for _, c := range []struct{ family, want string }{
		{"apiserver_watch_cache_events_received_total", pods + " 8"},
		{"apiserver_watch_cache_events_dispatched_total", pods + " 8"},
		{"apiserver_watch_cache_resource_version", fmt.Sprintf("%s %d", pods, rvOf(t, last)+1)},
		// The window of 4 grew (fresh events) to 8.
		{"watch_cache_capacity", pods + " 8"},
		{"watch_cache_capacity_increase_total", pods + " 1"},
		// Both got the two initial events (a, b).
		{"apiserver_init_events_total", pods + " 4"},
		// Both fell out of the window: both are cut off.
		{"apiserver_terminated_watchers_total", pods + " 2"},
		// The cache's list, counted as upstream's watch cache counts it.
		{"apiserver_storage_list_total", `group="",index="",resource="pods",storage="watchcache" 1`},
		{"apiserver_storage_list_fetched_objects_total", `group="",index="",resource="pods",storage="watchcache" 5`},
		{"apiserver_storage_list_evaluated_objects_total", `group="",resource="pods",storage="watchcache" 0`},
		{"apiserver_storage_list_returned_objects_total", `group="",resource="pods",storage="watchcache" 1`},
		{"apiserver_watch_cache_consistent_read_total", `fallback="false",group="",resource="pods",success="true" 1`},
		// The consistent list waited for the cache (need > 0), as did
		// the two watches from "" that send initial events.
		{"apiserver_watch_cache_read_wait_seconds", pods + " 3"},
		{"apiserver_resource_objects", pods + " 5"},
	} {
		if got := series(t, reg, c.family); len(got) != 1 || got[0] != c.want {
			t.Errorf("%s: got %q, want [%q]", c.family, got, c.want)
		}
	}

	e.c.Stop()
	if got := series(t, reg, "apiserver_resource_objects"); len(got) != 0 {
		t.Errorf("after Stop: got %q, want no object count", got)
	}
}

// TestCacherObjectCountBeforeReady: until the cache has its first list,
// the object count comes from the underlying store if it can count.
func TestCacherObjectCountBeforeReady(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := storagemetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	e := newPodEnv(t, envOptions{cacher: func(c *Config) {
		c.Metrics = m
		c.GroupResource = schema.GroupResource{Resource: "pods"}
	}})
	e.create("a", nil)
	e.waitRevision(e.c.Revision())
	e.c.setUnready()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	n, err := e.c.countObjects(ctx)
	if err != nil || n != 1 {
		t.Errorf("unready cache over a memory store: got %d, %v; want 1 from the store", n, err)
	}
}
