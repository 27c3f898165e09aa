package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

const dispatchFamily = "apiserver_watch_events_dispatch_duration_seconds"

// TestWatchDispatchDuration: apiserver_watch_events_dispatch_duration_seconds
// as kube-apiserver v1.37.2 serves it. Read from the reference binary after
// the same steps: the family's HELP and TYPE lines and buckets below; the
// three series of every cached resource exist, at 0, from the start; an
// event no watcher gets, initial events (a watch from resourceVersion 0)
// and the events a watch from an older revision replays are not observed,
// nor are bookmarks; every other event delivered to a watcher is observed
// once per watcher in each stage (15 here on both servers).
func TestWatchDispatchDuration(t *testing.T) {
	// The garbage collector and quota controllers (kube-controller-manager's
	// beside the reference) watch every resource, PodTemplates too.
	srv := kapitest.Start(t, kapitest.WithEmbeddedEtcd(),
		kapitest.WithFlags("--controllers=*,-garbage-collector-controller,-resourcequota-controller"))
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(srv.Config)

	// The exposition's lines of the family, as the reference's.
	text := metricsText(t, srv.Config)
	lines := familyLines(text, dispatchFamily)
	wantHead := []string{
		"# HELP " + dispatchFamily + " [ALPHA] Histogram of watch event dispatch latency broken by resource type and pipeline stage. The 'total' stage is the end-to-end latency of a delivered event.",
		"# TYPE " + dispatchFamily + " histogram",
	}
	if len(lines) < 2 || !slices.Equal(lines[:2], wantHead) {
		t.Fatalf("head of the family:\n%q\nwant\n%q", lines[:min(2, len(lines))], wantHead)
	}
	var les []string
	for _, stage := range []string{"cache_to_watcher", "storage_to_cache", "total"} {
		prefix := fmt.Sprintf(`%s_bucket{group="",resource="podtemplates",stage="%s",le="`, dispatchFamily, stage)
		les = les[:0]
		for _, l := range strings.Split(text, "\n") {
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				le, _, _ := strings.Cut(rest, `"`)
				les = append(les, le)
				if !strings.HasSuffix(l, "} 0") {
					t.Errorf("at start: %s, want 0", l)
				}
			}
		}
		want := []string{"0.0001", "0.0005", "0.001", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "+Inf"}
		if !slices.Equal(les, want) {
			t.Errorf("stage %s at start: buckets %q, want %q", stage, les, want)
		}
	}
	// Every cached resource has its series, as every one has
	// watch_cache_capacity.
	got := scrape(t, srv.Config)
	for _, m := range got["watch_cache_capacity"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for _, stage := range []string{"cache_to_watcher", "storage_to_cache", "total"} {
			labels["stage"] = stage
			if dispatchSeries(got[dispatchFamily], labels) == nil {
				t.Errorf("no %s series %v", dispatchFamily, labels)
			}
		}
	}

	for _, ns := range []string{"dispatch-a", "dispatch-b"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pts := cs.CoreV1().PodTemplates("dispatch-a")
	podTemplate := func(name, app string) *corev1.PodTemplate {
		return &corev1.PodTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": app}},
			Template:   corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}},
		}
	}
	list, err := pts.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// An event no watcher gets.
	if _, err := pts.Create(ctx, podTemplate("pre", "x"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Once the watch cache has it (a list of any state is the cache's),
	// the watches below get it from the cache's state or event window.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		l, err := pts.List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the watch cache did not get the first PodTemplate")
		}
	}

	// Four watches; "pre" reaches each of them as a replayed or initial
	// event, which is not observed.
	type watcher struct {
		name string
		opts metav1.ListOptions
		want int // events wanted, bookmarks aside
		mu   sync.Mutex
		got  int
		done chan struct{}
	}
	watchers := []*watcher{
		{name: "from the list's revision", opts: metav1.ListOptions{ResourceVersion: list.ResourceVersion}, want: 5},
		{name: "with a selector", opts: metav1.ListOptions{ResourceVersion: list.ResourceVersion, LabelSelector: "app=x"}, want: 4},
		{name: "from 0", opts: metav1.ListOptions{ResourceVersion: "0"}, want: 5},
		{name: "from 0 with bookmarks", opts: metav1.ListOptions{ResourceVersion: "0", AllowWatchBookmarks: true}, want: 5},
	}
	const live = 4 + 3 + 4 + 4 // what was delivered, less "pre"
	for _, w := range watchers {
		w.done = make(chan struct{})
		wi, err := pts.Watch(ctx, w.opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(wi.Stop)
		go func() {
			for ev := range wi.ResultChan() {
				if ev.Type == watch.Bookmark {
					continue
				}
				w.mu.Lock()
				w.got++
				if w.got == w.want {
					close(w.done)
				}
				w.mu.Unlock()
			}
		}()
	}

	if _, err := pts.Create(ctx, podTemplate("p1", "x"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p2, err := pts.Create(ctx, podTemplate("p2", "y"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p2.Labels["app"] = "x" // enters the selector's watch as ADDED
	if _, err := pts.Update(ctx, p2, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pts.Delete(ctx, "p1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// An event of another namespace, which none of the watches gets.
	if _, err := cs.CoreV1().PodTemplates("dispatch-b").Create(ctx, podTemplate("other", "x"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range watchers {
		select {
		case <-w.done:
		case <-time.After(30 * time.Second):
			w.mu.Lock()
			t.Fatalf("watch %s: %d events, want %d", w.name, w.got, w.want)
		}
	}

	// A watcher observes an event right after handing it over: the last
	// ones may be observed just after the client has them.
	counts := func() (map[string]uint64, map[string]*dto.Histogram) {
		mf := scrape(t, srv.Config)[dispatchFamily]
		c, h := map[string]uint64{}, map[string]*dto.Histogram{}
		for _, stage := range []string{"cache_to_watcher", "storage_to_cache", "total"} {
			m := dispatchSeries(mf, map[string]string{"group": "", "resource": "podtemplates", "stage": stage})
			if m == nil {
				t.Fatalf("no podtemplates series of stage %s", stage)
			}
			c[stage], h[stage] = m.GetHistogram().GetSampleCount(), m.GetHistogram()
		}
		return c, h
	}
	want := map[string]uint64{"cache_to_watcher": live, "storage_to_cache": live, "total": live}
	var c map[string]uint64
	var h map[string]*dto.Histogram
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, h = counts(); fmt.Sprint(c) == fmt.Sprint(want) || time.Now().After(deadline) {
			break
		}
	}
	time.Sleep(200 * time.Millisecond)
	if c, h = counts(); fmt.Sprint(c) != fmt.Sprint(want) {
		t.Fatalf("observations per stage %v, want %v (the events delivered, as kube-apiserver v1.37.2)", c, want)
	}
	for stage, hist := range h {
		buckets := hist.GetBucket()
		if n := buckets[len(buckets)-1].GetCumulativeCount(); n != live {
			t.Errorf("stage %s: %d observations in the last bucket, want %d", stage, n, live)
		}
	}
	// Each delivery's total covers its other two stages. On etcd the
	// storage's receipt comes before the cache's (the event is decoded
	// in between).
	total := h["total"].GetSampleSum()
	if s := h["storage_to_cache"].GetSampleSum(); s <= 0 || s > total {
		t.Errorf("storage_to_cache sum %g, want > 0 and at most total's %g", s, total)
	}
	if s := h["cache_to_watcher"].GetSampleSum(); s <= 0 || s > total {
		t.Errorf("cache_to_watcher sum %g, want > 0 and at most total's %g", s, total)
	}
}

// dispatchSeries is the series of mf with exactly labels, or nil.
func dispatchSeries(mf *dto.MetricFamily, labels map[string]string) *dto.Metric {
	for _, m := range mf.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		match := true
		for _, l := range m.GetLabel() {
			if v, ok := labels[l.GetName()]; !ok || v != l.GetValue() {
				match = false
				break
			}
		}
		if match {
			return m
		}
	}
	return nil
}
