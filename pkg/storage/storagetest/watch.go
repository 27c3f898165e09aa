package storagetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
)

func watchCases() []testCase {
	return []testCase{
		{"FromEmptyResourceVersion", func(t *testing.T, e *env) { testWatchFromState(t, e, "") }},
		{"FromZero", func(t *testing.T, e *env) { testWatchFromState(t, e, "0") }},
		{"ResumeFromEveryRevision", testWatchResume},
		{"OrderExactlyOnceConcurrentWriters", testWatchConcurrentWriters},
		{"SingleKey", testWatchSingleKey},
		{"RecursivePrefix", testWatchRecursivePrefix},
		{"SelectorTransitions", testWatchSelectorTransitions},
		{"DeletedObject", testWatchDeletedObject},
		{"Bookmarks", testWatchBookmarks},
		{"InitialEventsEndBookmark", testWatchInitialEvents},
		{"InitialEventsWithoutBookmarks", testWatchInitialEventsNoBookmark},
		{"ContextCancelClosesWatch", testWatchContextCancel},
		{"StopClosesWatch", testWatchStop},
	}
}

// evt is the part of a watch event the suite compares.
type evt struct {
	Type watch.EventType
	Name string // namespace/name
	RV   uint64
}

func (v evt) String() string { return fmt.Sprintf("%s %s@%d", v.Type, v.Name, v.RV) }

func describe(t *testing.T, ev watch.Event) evt {
	t.Helper()
	if ev.Type == watch.Error {
		t.Fatalf("unexpected ERROR event: %#v", ev.Object)
	}
	p, ok := ev.Object.(*corev1.Pod)
	if !ok {
		t.Fatalf("%s event carries %T, want *corev1.Pod", ev.Type, ev.Object)
	}
	name := p.Namespace + "/" + p.Name
	if ev.Type == watch.Bookmark {
		name = ""
	}
	return evt{Type: ev.Type, Name: name, RV: rvOf(t, p)}
}

func (e *env) watch(key string, opts storage.ListOptions) watch.Interface {
	e.t.Helper()
	return e.watchCtx(e.ctx, key, opts)
}

func (e *env) watchCtx(ctx context.Context, key string, opts storage.ListOptions) watch.Interface {
	e.t.Helper()
	if opts.Predicate.GetAttrs == nil {
		opts.Predicate.GetAttrs = PodAttrs
	}
	w, err := e.pods.Watch(ctx, key, opts)
	if err != nil {
		e.t.Fatalf("watch %s at %q: %v", key, opts.ResourceVersion, err)
	}
	e.t.Cleanup(w.Stop)
	return w
}

// next returns the next event of w, failing if none comes in waitTimeout or
// the watch closes.
func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatalf("watch closed, want an event")
		}
		return ev
	case <-time.After(waitTimeout):
		t.Fatalf("no watch event within %v", waitTimeout)
	}
	return watch.Event{}
}

// nextChange returns the next non-BOOKMARK event.
func nextChange(t *testing.T, w watch.Interface) evt {
	t.Helper()
	for {
		ev := next(t, w)
		if ev.Type != watch.Bookmark {
			return describe(t, ev)
		}
	}
}

func expectEvents(t *testing.T, w watch.Interface, want []evt) {
	t.Helper()
	for i, wv := range want {
		if got := nextChange(t, w); got != wv {
			t.Fatalf("event %d: got %v, want %v (all wanted: %v)", i, got, wv, want)
		}
	}
}

// expectClosed waits for w's result channel to close, draining events.
func expectClosed(t *testing.T, w watch.Interface) {
	t.Helper()
	deadline := time.After(waitTimeout)
	for {
		select {
		case _, ok := <-w.ResultChan():
			if !ok {
				return
			}
		case <-deadline:
			t.Fatalf("watch result channel still open %v later", waitTimeout)
		}
	}
}

func added(p *corev1.Pod) evt    { return evt{watch.Added, p.Namespace + "/" + p.Name, rvOfPod(p)} }
func modified(p *corev1.Pod) evt { return evt{watch.Modified, p.Namespace + "/" + p.Name, rvOfPod(p)} }
func deleted(p *corev1.Pod) evt  { return evt{watch.Deleted, p.Namespace + "/" + p.Name, rvOfPod(p)} }

func rvOfPod(p *corev1.Pod) uint64 {
	rv, err := storage.ParseResourceVersion(p.ResourceVersion)
	if err != nil {
		panic(fmt.Sprintf("storagetest: bad resourceVersion %q from the backend", p.ResourceVersion)) // rvOf checked it
	}
	return rv
}

func testWatchFromState(t *testing.T, e *env, rv string) {
	a := e.create("ns", "a", nil, "")
	b := e.create("ns", "b", nil, "")
	w := e.watch("/pods", storage.ListOptions{ResourceVersion: rv, Recursive: true})
	initial := []evt{nextChange(t, w), nextChange(t, w)}
	slices.SortFunc(initial, func(x, y evt) int { return compareStrings(x.Name, y.Name) })
	if want := []evt{added(a), added(b)}; !slices.Equal(initial, want) {
		t.Fatalf("initial events %v, want %v", initial, want)
	}
	a2 := e.update("ns", "a", func(p *corev1.Pod) { p.Labels = map[string]string{"x": "y"} })
	bDel := e.delete("ns", "b")
	c := e.create("ns", "c", nil, "")
	expectEvents(t, w, []evt{modified(a2), deleted(bDel), added(c)})
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// testWatchResume watches from every revision of a history of changes and
// expects exactly the later changes, in order, then nothing but what comes
// next.
func testWatchResume(t *testing.T, e *env) {
	start := e.seed()
	var hist []evt
	hist = append(hist, added(e.create("ns1", "a", nil, "")))
	hist = append(hist, added(e.create("ns1", "b", nil, "")))
	hist = append(hist, modified(e.update("ns1", "a", func(p *corev1.Pod) { p.Labels = map[string]string{"v": "2"} })))
	hist = append(hist, added(e.create("ns2", "c", nil, "")))
	hist = append(hist, deleted(e.delete("ns1", "b")))
	hist = append(hist, modified(e.update("ns2", "c", func(p *corev1.Pod) { p.Spec.NodeName = "n" })))
	// A store's first try may start from a stale guess (a watch cache's
	// object from before the last update, which set the labels): the
	// mutation must not assume them; the retry sees the real object.
	hist = append(hist, modified(e.update("ns1", "a", func(p *corev1.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels["v"] = "3"
	})))
	hist = append(hist, added(e.create("ns1", "b", nil, "")))
	hist = append(hist, deleted(e.delete("ns1", "a")))
	hist = append(hist, modified(e.update("ns1", "b", func(p *corev1.Pod) { p.Labels = map[string]string{"v": "2"} })))
	end := e.currentRevision()

	watchers := map[uint64]watch.Interface{}
	for rev := start; rev <= end; rev++ {
		w := e.watch("/pods", storage.ListOptions{ResourceVersion: rvString(rev), Recursive: true})
		watchers[rev] = w
		var want []evt
		for _, h := range hist {
			if h.RV > rev {
				want = append(want, h)
			}
		}
		t.Run(fmt.Sprintf("from %d", rev), func(t *testing.T) { expectEvents(t, w, want) })
	}
	sentinel := added(e.create("ns1", "sentinel", nil, ""))
	for rev, w := range watchers {
		if got := nextChange(t, w); got != sentinel {
			t.Fatalf("watch from %d: after its history got %v, want %v (each change exactly once)", rev, got, sentinel)
		}
	}
}

func testWatchConcurrentWriters(t *testing.T, e *env) {
	const writers, perWriter = 4, 25
	w := e.watch("/pods/ns", storage.ListOptions{ResourceVersion: rvString(e.seed()), Recursive: true})
	var mu sync.Mutex
	var written []evt
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Go(func() {
			name := fmt.Sprintf("w%d", i)
			out := &corev1.Pod{}
			if err := e.pods.Create(e.ctx, podKey("ns", name), newPod("ns", name, nil, ""), out); err != nil {
				errs <- err
				return
			}
			mu.Lock()
			written = append(written, added(out))
			mu.Unlock()
			for j := 1; j < perWriter; j++ {
				out := &corev1.Pod{}
				err := e.pods.GuaranteedUpdate(e.ctx, podKey("ns", name), out, false, nil, func(in runtime.Object) (runtime.Object, error) {
					p := in.(*corev1.Pod)
					p.Labels = map[string]string{"j": fmt.Sprint(j)}
					return p, nil
				}, nil)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				written = append(written, modified(out))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("writer: %v", err)
	}
	slices.SortFunc(written, func(a, b evt) int { return int(a.RV) - int(b.RV) })
	expectEvents(t, w, written)
	sentinel := added(e.create("ns", "sentinel", nil, ""))
	if got := nextChange(t, w); got != sentinel {
		t.Fatalf("after %d events got %v, want %v", len(written), got, sentinel)
	}
}

func testWatchSingleKey(t *testing.T, e *env) {
	start := e.create("ns", "a", nil, "")
	w := e.watch(podKey("ns", "a"), storage.ListOptions{ResourceVersion: start.ResourceVersion})
	e.create("ns", "b", nil, "")
	e.create("ns", "a-longer", nil, "")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}
	if err := e.cms.Create(e.ctx, "/configmaps/ns/a", cm, nil); err != nil {
		t.Fatalf("create configmap: %v", err)
	}
	a2 := e.update("ns", "a", func(p *corev1.Pod) { p.Labels = map[string]string{"v": "2"} })
	aDel := e.delete("ns", "a")
	expectEvents(t, w, []evt{modified(a2), deleted(aDel)})
}

func testWatchRecursivePrefix(t *testing.T, e *env) {
	w := e.watch("/pods/a", storage.ListOptions{ResourceVersion: rvString(e.seed()), Recursive: true})
	e.create("ab", "x", nil, "") // same string prefix, other namespace
	e.create("b", "x", nil, "")
	x := e.create("a", "x", nil, "")
	y := e.create("a", "y", nil, "")
	expectEvents(t, w, []evt{added(x), added(y)})
}

func testWatchSelectorTransitions(t *testing.T, e *env) {
	rev := e.seed()
	tests := []struct {
		name, label, field string
		in, out            func(p *corev1.Pod)
	}{
		{"label", "app=web", "",
			func(p *corev1.Pod) { p.Labels = map[string]string{"app": "web"} },
			func(p *corev1.Pod) { p.Labels = map[string]string{"app": "db"} }},
		{"field", "", "spec.nodeName=node1",
			func(p *corev1.Pod) { p.Spec.NodeName = "node1" },
			func(p *corev1.Pod) { p.Spec.NodeName = "node2" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := tt.name
			w := e.watch("/pods/"+ns, storage.ListOptions{ResourceVersion: rvString(rev), Recursive: true,
				Predicate: predicate(t, tt.label, tt.field)})
			mk := func(name string, f func(*corev1.Pod)) *corev1.Pod {
				p := newPod(ns, name, nil, "")
				f(p)
				out := &corev1.Pod{}
				if err := e.pods.Create(e.ctx, podKey(ns, name), p, out); err != nil {
					t.Fatalf("create: %v", err)
				}
				return out
			}
			a := mk("a", tt.in)                                                                          // ADDED
			mk("b", tt.out)                                                                              // not seen
			a2 := e.update(ns, "a", func(p *corev1.Pod) { p.Annotations = map[string]string{"v": "2"} }) // MODIFIED
			a3 := e.update(ns, "a", tt.out)                                                              // moves out: DELETED
			e.update(ns, "a", func(p *corev1.Pod) { p.Annotations = map[string]string{"v": "4"} })       // out: not seen
			e.update(ns, "b", func(p *corev1.Pod) { p.Annotations = map[string]string{"v": "2"} })       // out: not seen
			b2 := e.update(ns, "b", tt.in)                                                               // moves in: ADDED
			bDel := e.delete(ns, "b")                                                                    // DELETED
			e.delete(ns, "a")                                                                            // out: not seen
			c := mk("c", tt.in)
			// The DELETED event of a move-out carries the last matching state
			// with the revision of the change.
			aOut := evt{watch.Deleted, ns + "/a", rvOfPod(a3)}
			expectEvents(t, w, []evt{added(a), modified(a2), aOut, added(b2), deleted(bDel), added(c)})
		})
	}
}

func testWatchDeletedObject(t *testing.T, e *env) {
	a := e.create("ns", "a", map[string]string{"app": "x"}, "node1")
	w := e.watch("/pods", storage.ListOptions{ResourceVersion: a.ResourceVersion, Recursive: true})
	out := e.delete("ns", "a")
	ev := next(t, w)
	p, ok := ev.Object.(*corev1.Pod)
	if ev.Type != watch.Deleted || !ok {
		t.Fatalf("got %s %T, want DELETED *corev1.Pod", ev.Type, ev.Object)
	}
	if p.Labels["app"] != "x" || p.Spec.NodeName != "node1" || p.UID != a.UID {
		t.Fatalf("DELETED object labels %v node %q uid %s, want the last stored state", p.Labels, p.Spec.NodeName, p.UID)
	}
	if p.ResourceVersion != out.ResourceVersion || rvOf(t, p) <= rvOf(t, a) {
		t.Fatalf("DELETED object resourceVersion %s, want the delete's revision %s", p.ResourceVersion, out.ResourceVersion)
	}
}

func testWatchBookmarks(t *testing.T, e *env) {
	a := e.create("ns", "a", nil, "")
	w := e.watch("/pods", storage.ListOptions{ResourceVersion: a.ResourceVersion, Recursive: true, ProgressNotify: true,
		Predicate: storage.SelectionPredicate{AllowWatchBookmarks: true}})
	bm := waitBookmark(t, w)
	if bm.RV < rvOf(t, a) {
		t.Fatalf("bookmark resourceVersion %d, want >= the watch's %d", bm.RV, rvOf(t, a))
	}
	b := e.create("ns", "b", nil, "")
	if got := nextChange(t, w); got != added(b) {
		t.Fatalf("got %v, want %v", got, added(b))
	}
	if bm := waitBookmark(t, w); bm.RV < rvOf(t, b) {
		t.Fatalf("bookmark after %v has resourceVersion %d, want >= %d", added(b), bm.RV, rvOf(t, b))
	}
}

// waitBookmark waits up to BookmarkWait for a BOOKMARK and checks its shape.
func waitBookmark(t *testing.T, w watch.Interface) evt {
	t.Helper()
	deadline := time.After(BookmarkWait)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed, want a BOOKMARK")
			}
			if ev.Type != watch.Bookmark {
				t.Fatalf("got %v, want a BOOKMARK on an idle watch", describe(t, ev))
			}
			p, isPod := ev.Object.(*corev1.Pod)
			if !isPod || p.Name != "" || p.Namespace != "" || p.ResourceVersion == "" {
				t.Fatalf("BOOKMARK object %T %+v, want an empty *corev1.Pod with only resourceVersion", ev.Object, ev.Object)
			}
			return describe(t, ev)
		case <-deadline:
			t.Fatalf("no BOOKMARK within %v", BookmarkWait)
		}
	}
}

func testWatchInitialEvents(t *testing.T, e *env) {
	a := e.create("ns", "a", map[string]string{"app": "x"}, "")
	e.create("ns", "b", map[string]string{"app": "y"}, "")
	c := e.create("ns", "c", map[string]string{"app": "x"}, "")
	yes := true
	w := e.watch("/pods", storage.ListOptions{Recursive: true, SendInitialEvents: &yes,
		Predicate: storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"app": "x"}), GetAttrs: PodAttrs, AllowWatchBookmarks: true}})
	initial := []evt{nextChange(t, w), nextChange(t, w)}
	slices.SortFunc(initial, func(x, y evt) int { return compareStrings(x.Name, y.Name) })
	if want := []evt{added(a), added(c)}; !slices.Equal(initial, want) {
		t.Fatalf("initial events %v, want %v", initial, want)
	}
	ev := next(t, w)
	if ev.Type != watch.Bookmark {
		t.Fatalf("after initial events got %v, want the initial-events-end BOOKMARK", describe(t, ev))
	}
	p := ev.Object.(*corev1.Pod)
	if p.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
		t.Fatalf("end bookmark annotations %v, want %s=true", p.Annotations, metav1.InitialEventsAnnotationKey)
	}
	if rvOf(t, p) < rvOf(t, c) {
		t.Fatalf("end bookmark resourceVersion %s, want >= %s", p.ResourceVersion, c.ResourceVersion)
	}
	b2 := e.update("ns", "b", func(p *corev1.Pod) { p.Labels["app"] = "x" })
	if got := nextChange(t, w); got != added(b2) {
		t.Fatalf("got %v, want %v", got, added(b2))
	}
}

func testWatchInitialEventsNoBookmark(t *testing.T, e *env) {
	a := e.create("ns", "a", nil, "")
	yes := true
	w := e.watch("/pods", storage.ListOptions{Recursive: true, SendInitialEvents: &yes})
	if got := nextChange(t, w); got != added(a) {
		t.Fatalf("got %v, want %v", got, added(a))
	}
	b := e.create("ns", "b", nil, "")
	ev := next(t, w)
	if got := describe(t, ev); got != added(b) {
		t.Fatalf("got %v, want %v (no BOOKMARK without AllowWatchBookmarks)", got, added(b))
	}
}

func testWatchContextCancel(t *testing.T, e *env) {
	a := e.create("ns", "a", nil, "")
	ctx, cancel := context.WithCancel(e.ctx)
	w := e.watchCtx(ctx, "/pods", storage.ListOptions{ResourceVersion: a.ResourceVersion, Recursive: true})
	b := e.create("ns", "b", nil, "")
	if got := nextChange(t, w); got != added(b) {
		t.Fatalf("got %v, want %v", got, added(b))
	}
	cancel()
	expectClosed(t, w)
	e.create("ns", "c", nil, "") // writes go on
}

func testWatchStop(t *testing.T, e *env) {
	a := e.create("ns", "a", nil, "")
	w := e.watch("/pods", storage.ListOptions{ResourceVersion: a.ResourceVersion, Recursive: true})
	e.create("ns", "b", nil, "") // undelivered when stopped
	w.Stop()
	expectClosed(t, w)
	w.Stop() // idempotent
	e.create("ns", "c", nil, "")
}
