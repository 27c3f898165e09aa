package cacher

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
)

// dispatchCounts are the observation counts and sums of the pods'
// dispatch latency series, by stage.
func dispatchCounts(t *testing.T, reg *prometheus.Registry) (map[string]uint64, map[string]float64) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts, sums := map[string]uint64{}, map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "apiserver_watch_events_dispatch_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var stage string
			for _, l := range m.GetLabel() {
				if l.GetName() == "stage" {
					stage = l.GetValue()
				}
			}
			counts[stage], sums[stage] = m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
		}
	}
	return counts, sums
}

// TestDispatchLatency: the cache observes each event it delivers to a
// watcher, once per watcher, in the three stages of
// apiserver_watch_events_dispatch_duration_seconds, whether the watcher
// is read on its result channel or streamed, as upstream's watch cache
// observes its watchers' deliveries; not the initial events, the events
// a watch from an older revision replays, bookmarks, or events a watcher
// does not get. Over the memory store (no receipt time of its own) the
// storage_to_cache stage is 0.
func TestDispatchLatency(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := storagemetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	e := newPodEnv(t, envOptions{cacher: func(c *Config) {
		c.Metrics = m
		c.GroupResource = schema.GroupResource{Resource: "pods"}
	}})
	stages := []string{"cache_to_watcher", "storage_to_cache", "total"}
	if counts, _ := dispatchCounts(t, reg); len(counts) != 3 || counts["total"] != 0 {
		t.Fatalf("at start: %v, want the three stages at 0", counts)
	}
	first := e.create("a", map[string]string{"app": "x"})
	e.waitRevision(rvOf(t, first))

	type reader struct {
		name string
		w    watch.Interface
		want int // events, bookmarks aside
		got  chan watch.Event
	}
	from := fmt.Sprint(rvOf(t, first) - 1) // replays "a"
	sel := storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"app": "x"}), GetAttrs: e.c.cfg.GetAttrs}
	chanWatch := func(rv string, opts storage.ListOptions) watch.Interface {
		opts.ResourceVersion, opts.Recursive = rv, true
		w, err := e.c.Watch(e.ctx, "/pods", opts)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	streamed, err := e.c.Watch(storage.WithStreamedWatch(e.ctx), "/pods", storage.ListOptions{ResourceVersion: from, Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	readers := []*reader{
		{name: "initial events", w: chanWatch("0", storage.ListOptions{}), want: 5},
		{name: "replayed", w: chanWatch(from, storage.ListOptions{}), want: 5},
		{name: "selector", w: chanWatch(from, storage.ListOptions{Predicate: sel}), want: 4},
		{name: "bookmarks", w: chanWatch("0", storage.ListOptions{ProgressNotify: true, Predicate: storage.SelectionPredicate{AllowWatchBookmarks: true}}), want: 5},
		{name: "streamed", w: streamed, want: 5},
	}
	const live = 4 + 4 + 3 + 4 + 4 // "a" is no live event of any
	for _, r := range readers {
		r.got = make(chan watch.Event, 100)
		t.Cleanup(r.w.Stop)
		receive := func(ev watch.Event) bool {
			if ev.Type != watch.Bookmark {
				r.got <- ev
			}
			return true
		}
		if s, ok := r.w.(interface {
			Stream(func(watch.Event) bool, func() bool) bool
		}); ok && r.name == "streamed" {
			go s.Stream(receive, nil)
			continue
		}
		go func() {
			for ev := range r.w.ResultChan() {
				receive(ev)
			}
		}()
	}
	e.create("b", map[string]string{"app": "x"})
	e.create("c", map[string]string{"app": "y"})
	e.relabel("c", map[string]string{"app": "x"}) // enters the selector
	e.delete("b")
	for _, r := range readers {
		for i := range r.want {
			select {
			case <-r.got:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: %d events, want %d", r.name, i, r.want)
			}
		}
	}
	// Counted before each watcher waits again.
	var counts map[string]uint64
	var sums map[string]float64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		counts, sums = dispatchCounts(t, reg)
		if counts["total"] >= live && counts["storage_to_cache"] >= live && counts["cache_to_watcher"] >= live || time.Now().After(deadline) {
			break
		}
	}
	time.Sleep(50 * time.Millisecond)
	counts, sums = dispatchCounts(t, reg)
	for _, s := range stages {
		if counts[s] != live {
			t.Errorf("stage %s: %d observations, want %d", s, counts[s], live)
		}
	}
	if sums["storage_to_cache"] != 0 {
		t.Errorf("storage_to_cache sum %g over the memory store, want 0", sums["storage_to_cache"])
	}
	if sums["total"] < sums["cache_to_watcher"] || sums["total"] <= 0 {
		t.Errorf("sums %v: total must cover cache_to_watcher", sums)
	}
}
