package cacher

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
	"github.com/kapi-dev/kapi/pkg/storage/watchinit"
)

func TestNewValidates(t *testing.T) {
	e := newPodEnv(t, envOptions{})
	good := Config{Storage: e.under, ResourcePrefix: "/pods", NewFunc: e.c.cfg.NewFunc, NewListFunc: e.c.cfg.NewListFunc}
	tests := []struct {
		name   string
		mutate func(*Config)
	}{
		{"no storage", func(c *Config) { c.Storage = nil }},
		{"no prefix", func(c *Config) { c.ResourcePrefix = "" }},
		{"root prefix", func(c *Config) { c.ResourcePrefix = "/" }},
		{"no NewFunc", func(c *Config) { c.NewFunc = nil }},
		{"no NewListFunc", func(c *Config) { c.NewListFunc = nil }},
		{"window above max", func(c *Config) { c.EventWindow, c.MaxEventWindow = 10, 5 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := good
			tc.mutate(&cfg)
			if c, err := New(cfg); err == nil {
				c.Stop()
				t.Fatalf("New: got no error, want one")
			}
		})
	}
}

// TestFanOut: every one of many watchers gets every event, in order.
func TestFanOut(t *testing.T) {
	const watchers, writes = 1000, 60
	e := newPodEnv(t, envOptions{cacher: func(c *Config) { c.WatcherBuffer = 2 * writes }})
	start := e.createCM("start")
	ws := make([]watch.Interface, watchers)
	for i := range ws {
		ws[i] = e.watch(strconv.FormatUint(start, 10), storage.ListOptions{})
	}
	var want []ev
	for i := range writes {
		name := fmt.Sprintf("p%d", i%10)
		var p *corev1.Pod
		if i < 10 {
			p = e.create(name, nil)
			want = append(want, ev{watch.Added, name, rvOf(t, p)})
		} else {
			p = e.relabel(name, map[string]string{"i": strconv.Itoa(i)})
			want = append(want, ev{watch.Modified, name, rvOf(t, p)})
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, watchers)
	for i, w := range ws {
		wg.Go(func() {
			timer := time.NewTimer(waitTimeout)
			defer timer.Stop()
			for j := 0; j < len(want); {
				select {
				case e, ok := <-w.ResultChan():
					if !ok {
						errs <- fmt.Sprintf("watcher %d: closed after %d events", i, j)
						return
					}
					if e.Type == watch.Bookmark {
						continue
					}
					p := e.Object.(*corev1.Pod)
					got := ev{e.Type, p.Name, rvOf(t, p)}
					if got != want[j] {
						errs <- fmt.Sprintf("watcher %d: event %d: got %v, want %v", i, j, got, want[j])
						return
					}
					j++
				case <-timer.C:
					errs <- fmt.Sprintf("watcher %d: got %d events, want %d", i, j, len(want))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
}

// TestSharedEventObjects: watchers share the event objects (no copy per
// watcher); Get and GetList hand out copies.
func TestSharedEventObjects(t *testing.T) {
	e := newPodEnv(t, envOptions{})
	w1, w2 := e.watch("0", storage.ListOptions{}), e.watch("0", storage.ListOptions{})
	p := e.create("a", map[string]string{"k": "v"})
	e1, e2 := <-w1.ResultChan(), <-w2.ResultChan()
	if e1.Object != e2.Object {
		t.Fatalf("watchers got different objects %p and %p, want the shared one", e1.Object, e2.Object)
	}
	e.waitRevision(rvOf(t, p))
	got := &corev1.Pod{}
	if err := e.c.Get(e.ctx, podKey("a"), storage.GetOptions{ResourceVersion: "0"}, got); err != nil {
		t.Fatalf("get: %v", err)
	}
	got.Labels["k"] = "changed"
	list := &corev1.PodList{}
	if err := e.c.GetList(e.ctx, "/pods", storage.ListOptions{ResourceVersion: "0", Recursive: true}, list); err != nil {
		t.Fatalf("list: %v", err)
	}
	list.Items[0].Labels["k"] = "changed too"
	if v := e1.Object.(*corev1.Pod).Labels["k"]; v != "v" {
		t.Fatalf("cached object's label: got %q, want %q (Get/GetList must copy)", v, "v")
	}
	if n := e.c.stats.getsCached.Load(); n != 1 {
		t.Fatalf("gets served from cache: got %d, want 1", n)
	}
}

// TestCacheableEventObjects: watches whose context asks for them get
// their events' objects as one shared cacheable.Object per event (a
// selector's leave object too), encoded once for all of them; the others
// get the plain shared object; initial events stay plain.
func TestCacheableEventObjects(t *testing.T) {
	e := newPodEnv(t, envOptions{})
	e.waitRevision(rvOf(t, e.create("first", map[string]string{"k": "v"})))
	sharedCtx := cacheable.WithObjects(e.ctx)
	watchWith := func(ctx context.Context, opts storage.ListOptions) watch.Interface {
		t.Helper()
		opts.Recursive = true
		w, err := e.c.Watch(ctx, "/pods", opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		return w
	}
	s1, s2 := watchWith(sharedCtx, storage.ListOptions{ResourceVersion: "0"}), watchWith(sharedCtx, storage.ListOptions{ResourceVersion: "0"})
	plain := watchWith(e.ctx, storage.ListOptions{ResourceVersion: "0"})
	sel, err := labels.Parse("k=v")
	if err != nil {
		t.Fatal(err)
	}
	selective := watchWith(sharedCtx, storage.ListOptions{ResourceVersion: "0", Predicate: storage.SelectionPredicate{Label: sel}})
	for _, w := range []watch.Interface{s1, s2, plain, selective} {
		if ev := <-w.ResultChan(); ev.Type != watch.Added {
			t.Fatalf("initial event %v", ev.Type)
		} else if _, ok := ev.Object.(*corev1.Pod); !ok {
			t.Fatalf("initial event object %T, want a plain *Pod", ev.Object)
		}
	}
	p := e.create("a", map[string]string{"k": "v"})
	e1, e2, e3, e4 := <-s1.ResultChan(), <-s2.ResultChan(), <-plain.ResultChan(), <-selective.ResultChan()
	c1, ok := e1.Object.(*cacheable.Object)
	if !ok || e2.Object != e1.Object || e4.Object != e1.Object {
		t.Fatalf("shared watchers got %T %p, %p, %p; want one *cacheable.Object", e1.Object, e1.Object, e2.Object, e4.Object)
	}
	if got, ok := e3.Object.(*corev1.Pod); !ok || got.Name != "a" {
		t.Fatalf("plain watcher got %T, want the *Pod", e3.Object)
	}
	if got := c1.GetObject().(*corev1.Pod); got.Name != "a" || got.ResourceVersion != p.ResourceVersion {
		t.Fatalf("cacheable object holds %s@%s", got.Name, got.ResourceVersion)
	}
	// The object leaves the selector: the selective watcher's DELETED
	// carries a shared leave object.
	e.relabel("a", map[string]string{"k": "w"})
	for _, w := range []watch.Interface{s1, s2, plain} {
		<-w.ResultChan()
	}
	leave := <-selective.ResultChan()
	if leave.Type != watch.Deleted {
		t.Fatalf("selective watcher got %v, want DELETED", leave.Type)
	}
	if lo, ok := leave.Object.(*cacheable.Object); !ok || lo.GetObject().(*corev1.Pod).Labels["k"] != "v" {
		t.Fatalf("leave object %T, want a cacheable previous state", leave.Object)
	}
}

// TestSlowWatcherIsCutOff: a watcher that does not read while its next
// event leaves the event window is terminated when it reads again, while
// the others get every event; resuming from its last revision is 410, so
// its client relists.
func TestSlowWatcherIsCutOff(t *testing.T) {
	const writes = 40
	e := newPodEnv(t, envOptions{cacher: func(c *Config) {
		c.WatcherBuffer = 4
		c.EventWindow, c.MaxEventWindow, c.EventFreshness = 8, 8, -1
		c.DispatchBudget = -1 // no wait: lagging at once
	}})
	start := strconv.FormatUint(e.createCM("start"), 10)
	slow := e.watch(start, storage.ListOptions{})
	fast := e.watch(start, storage.ListOptions{})
	var want []ev
	for i := range writes {
		p := e.create(fmt.Sprintf("p%02d", i), nil)
		want = append(want, ev{watch.Added, p.Name, rvOf(t, p)})
		// The fast watcher keeps up: it reads each event before the next write.
		if got := nextEvent(t, fast); got != want[i] {
			t.Fatalf("fast watcher event %d: got %v, want %v", i, got, want[i])
		}
	}
	// The slow watcher was cut off: its channel closes before all events.
	var last uint64
	n := 0
	for e := range slow.ResultChan() {
		n++
		last = rvOf(t, e.Object)
	}
	if n >= writes {
		t.Fatalf("slow watcher got all %d events, want it cut off with a window of 8", n)
	}
	if got := fmt.Sprint(n > 0 && last == want[n-1].RV); got != "true" {
		t.Fatalf("slow watcher got %d events, the last at %d: want the first ones, in order", n, last)
	}
	// Resuming from its last revision is 410: its client relists.
	opts := storage.ListOptions{ResourceVersion: strconv.FormatUint(last, 10), Recursive: true}
	if _, err := e.c.Watch(e.ctx, "/pods", opts); !storage.IsExpired(err) {
		t.Fatalf("watch from %d: got %v, want 410 Expired", last, err)
	}
}

// TestLaggingWatcherCatchesUp: a watcher whose buffer stays full past the
// dispatch budget (none here) is not terminated: it catches up from the
// event window and gets every event, in order, while the others are not
// held up by it.
func TestLaggingWatcherCatchesUp(t *testing.T) {
	const writes = 30
	e := newPodEnv(t, envOptions{cacher: func(c *Config) {
		c.WatcherBuffer = 2
		c.DispatchBudget = -1
	}})
	start := strconv.FormatUint(e.createCM("start"), 10)
	busy := e.watch(start, storage.ListOptions{})
	other := e.watch(start, storage.ListOptions{})
	var want []ev
	for i := range writes {
		p := e.create(fmt.Sprintf("p%02d", i), nil)
		want = append(want, ev{watch.Added, p.Name, rvOf(t, p)})
	}
	// The other watcher gets everything while the busy one reads nothing.
	expectEvents(t, other, want)
	// Then the busy one reads: everything, in order, from the window.
	expectEvents(t, busy, want)
	p := e.create("after", nil)
	want = []ev{{watch.Added, p.Name, rvOf(t, p)}}
	expectEvents(t, busy, want)
	expectEvents(t, other, want)
	e.c.mu.RLock()
	n := len(e.c.watchers)
	e.c.mu.RUnlock()
	if n != 2 {
		t.Fatalf("%d watchers left, want 2 (none terminated)", n)
	}
}

// TestWatchWindow: a watch resumes from any revision inside the event
// window and gets 410 from one older than it.
func TestWatchWindow(t *testing.T) {
	e := newPodEnv(t, envOptions{cacher: func(c *Config) { c.EventWindow, c.EventFreshness = 10, -1 }})
	var hist []ev
	for i := range 30 {
		p := e.create(fmt.Sprintf("p%02d", i), nil)
		hist = append(hist, ev{watch.Added, p.Name, rvOf(t, p)})
	}
	e.waitRevision(hist[29].RV)
	tests := []struct {
		name    string
		from    uint64
		want    []ev
		expired bool
	}{
		{"window start", hist[19].RV, hist[20:], false},
		{"inside", hist[25].RV, hist[26:], false},
		{"latest", hist[29].RV, nil, false},
		{"just before the window", hist[18].RV, nil, true},
		{"long before", hist[0].RV, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := e.c.Watch(e.ctx, "/pods", storage.ListOptions{ResourceVersion: strconv.FormatUint(tc.from, 10), Recursive: true})
			if tc.expired {
				if !storage.IsExpired(err) {
					t.Fatalf("watch from %d: got error %v, want ErrCodeExpired", tc.from, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("watch from %d: %v", tc.from, err)
			}
			defer w.Stop()
			expectEvents(t, w, tc.want)
		})
	}
	if n := e.c.stats.watchesDelegated.Load(); n != 0 {
		t.Fatalf("watches sent to the underlying store: got %d, want 0", n)
	}
}

// TestWindowFreshness: the window grows past EventWindow while its events
// are fresh (up to MaxEventWindow) and shrinks back when they are stale.
func TestWindowFreshness(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	e := newPodEnv(t, envOptions{cacher: func(c *Config) {
		c.EventWindow, c.MaxEventWindow, c.EventFreshness, c.Clock = 4, 16, time.Minute, clk
	}})
	var revs []uint64
	for i := range 20 {
		revs = append(revs, rvOf(t, e.create(fmt.Sprintf("p%02d", i), nil)))
	}
	e.waitRevision(revs[19])
	window := func() (capacity, n int, start uint64) {
		e.c.mu.RLock()
		defer e.c.mu.RUnlock()
		return len(e.c.events.buf), e.c.events.n, e.c.windowStart
	}
	if c, n, start := window(); c != 16 || n != 16 || start != revs[3] {
		t.Fatalf("fresh window: got capacity %d, %d events, start %d; want 16, 16, %d", c, n, start, revs[3])
	}
	clk.Step(2 * time.Minute)
	revs = append(revs, rvOf(t, e.create("late", nil)))
	e.waitRevision(revs[20])
	if c, n, start := window(); c != 8 || n != 8 || start != revs[12] {
		t.Fatalf("stale window: got capacity %d, %d events, start %d; want 8, 8, %d", c, n, start, revs[12])
	}
}

// TestConsistentList: a consistent list right after a write sees it, and is
// served from memory once the cache has caught up (through events of its
// own resource, or bookmarks after writes to others).
func TestConsistentList(t *testing.T) {
	e := newPodEnv(t, envOptions{cacher: func(c *Config) { c.ConsistentReadWait = waitTimeout }})
	for i := range 20 {
		var want uint64
		if i%2 == 0 {
			want = rvOf(t, e.create(fmt.Sprintf("p%02d", i), nil))
		} else {
			want = e.createCM(fmt.Sprintf("c%02d", i)) // only a bookmark tells the pods cache
		}
		list := &corev1.PodList{}
		if err := e.c.GetList(e.ctx, "/pods", storage.ListOptions{Recursive: true}, list); err != nil {
			t.Fatalf("list: %v", err)
		}
		rv, _ := storage.ParseResourceVersion(list.ResourceVersion)
		if rv < want {
			t.Fatalf("list %d at revision %d, want at least %d", i, rv, want)
		}
		if got := len(list.Items); got != i/2+1 {
			t.Fatalf("list %d: got %d pods, want %d", i, got, i/2+1)
		}
	}
	if cached, through := e.c.stats.listsCached.Load(), e.c.stats.listsDelegated.Load(); cached != 20 || through != 0 {
		t.Fatalf("lists: got %d cached and %d through, want 20 and 0", cached, through)
	}
}

// TestListResourceVersions: which lists the cache serves, and their answers.
func TestListResourceVersions(t *testing.T) {
	e := newPodEnv(t, envOptions{})
	a := e.create("a", map[string]string{"app": "x"})
	b := e.create("b", nil)
	e.waitRevision(rvOf(t, b))
	sel := storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"app": "x"})}
	tests := []struct {
		name   string
		opts   storage.ListOptions
		cached bool
		want   []string
	}{
		{"rv 0", storage.ListOptions{ResourceVersion: "0"}, true, []string{"a", "b"}},
		{"rv 0 ignores limit", storage.ListOptions{ResourceVersion: "0", Predicate: storage.SelectionPredicate{Limit: 1}}, true, []string{"a", "b"}},
		{"rv 0 selector", storage.ListOptions{ResourceVersion: "0", Predicate: sel}, true, []string{"a"}},
		{"not older than", storage.ListOptions{ResourceVersion: a.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, true, []string{"a", "b"}},
		{"consistent", storage.ListOptions{}, true, []string{"a", "b"}},
		{"consistent paginated", storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 1}}, true, []string{"a"}},
		{"not older than paginated", storage.ListOptions{ResourceVersion: a.ResourceVersion, Predicate: storage.SelectionPredicate{Limit: 1}, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, true, []string{"a"}},
		{"exact, no snapshot", storage.ListOptions{ResourceVersion: a.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact}, false, []string{"a"}},
		{"exact, current state", storage.ListOptions{ResourceVersion: b.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact}, true, []string{"a", "b"}},
		{"legacy exact", storage.ListOptions{ResourceVersion: b.ResourceVersion, Predicate: storage.SelectionPredicate{Limit: 5}}, true, []string{"a", "b"}},
		{"legacy exact, no snapshot", storage.ListOptions{ResourceVersion: a.ResourceVersion, Predicate: storage.SelectionPredicate{Limit: 5}}, false, []string{"a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := e.c.stats.listsCached.Load()
			tc.opts.Recursive = true
			list := &corev1.PodList{}
			if err := e.c.GetList(e.ctx, "/pods", tc.opts, list); err != nil {
				t.Fatalf("list: %v", err)
			}
			var names []string
			for _, p := range list.Items {
				names = append(names, p.Name)
			}
			if fmt.Sprint(names) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v, want %v", names, tc.want)
			}
			if cached := e.c.stats.listsCached.Load() > before; cached != tc.cached {
				t.Fatalf("served from cache: got %v, want %v", cached, tc.cached)
			}
		})
	}
}

// TestRelistAfterCompaction: when the cache's watch ends and its revision
// has been compacted, the cache relists; its watchers are terminated, and
// resuming from before the relist answers 410.
func TestRelistAfterCompaction(t *testing.T) {
	var gate *gatedStore
	e := newPodEnv(t, envOptions{wrap: func(s storage.Interface) storage.Interface {
		gate = newGatedStore(s)
		t.Cleanup(func() { gate.cut(); gate.wg.Wait() })
		return gate
	}})
	e.create("a", nil)
	b := e.create("b", nil)
	e.waitRevision(rvOf(t, b))
	w := e.watch("0", storage.ListOptions{})
	expectEvents(t, w, []ev{{watch.Added, "a", rvOf(t, b) - 1}, {watch.Added, "b", rvOf(t, b)}})

	gate.pause() // the cache stops hearing from its store
	e.create("c", nil)
	e.relabel("a", map[string]string{"v": "2"})
	e.delete("b")
	cur, err := e.c.CurrentRevision(e.ctx)
	if err != nil {
		t.Fatalf("current revision: %v", err)
	}
	if err := e.b.Compact(e.ctx, cur); err != nil {
		t.Fatalf("compact: %v", err)
	}
	gate.cut() // its watch ends; re-watching from its revision gets 410

	if n := expectClosed(t, w); n != 0 {
		t.Fatalf("terminated watcher got %d more events, want 0", n)
	}
	e.waitRevision(cur)
	list := &corev1.PodList{}
	if err := e.c.GetList(e.ctx, "/pods", storage.ListOptions{ResourceVersion: "0", Recursive: true}, list); err != nil {
		t.Fatalf("list: %v", err)
	}
	var names []string
	for _, p := range list.Items {
		names = append(names, p.Name+"="+p.Labels["v"])
	}
	if got, want := fmt.Sprint(names), "[a=2 c=]"; got != want {
		t.Fatalf("after relist: got %s, want %s", got, want)
	}
	_, err = e.c.Watch(e.ctx, "/pods", storage.ListOptions{ResourceVersion: b.ResourceVersion, Recursive: true})
	if !storage.IsExpired(err) {
		t.Fatalf("watch from before the relist: got %v, want ErrCodeExpired", err)
	}
	w2 := e.watch(strconv.FormatUint(cur, 10), storage.ListOptions{})
	d := e.create("d", nil)
	expectEvents(t, w2, []ev{{watch.Added, "d", rvOf(t, d)}})
}

// TestStop: Stop terminates the watchers; later requests go to the
// underlying store.
func TestStop(t *testing.T) {
	e := newPodEnv(t, envOptions{})
	w := e.watch("0", storage.ListOptions{})
	e.c.Stop()
	expectClosed(t, w)
	e.c.Stop() // idempotent
	p := e.create("a", nil)
	got := &corev1.Pod{}
	if err := e.c.Get(e.ctx, podKey("a"), storage.GetOptions{ResourceVersion: "0"}, got); err != nil {
		t.Fatalf("get after stop: %v", err)
	}
	if got.ResourceVersion != p.ResourceVersion {
		t.Fatalf("get after stop: got resourceVersion %s, want %s", got.ResourceVersion, p.ResourceVersion)
	}
	w2 := e.watch("0", storage.ListOptions{})
	expectEvents(t, w2, []ev{{watch.Added, "a", rvOf(t, p)}})
	if n := e.c.stats.watchesDelegated.Load(); n != 1 {
		t.Fatalf("watches through after stop: got %d, want 1", n)
	}
}

// TestBusyWatcherIsWaitedFor: a watcher whose buffer is full is waited for
// (within the dispatch budget) rather than terminated: it gets every event
// once it reads again, and so do the others.
func TestBusyWatcherIsWaitedFor(t *testing.T) {
	const writes = 30
	e := newPodEnv(t, envOptions{cacher: func(c *Config) {
		c.WatcherBuffer = 2
		c.DispatchBudget = time.Hour // never runs out here: no timing in this test
	}})
	start := strconv.FormatUint(e.createCM("start"), 10)
	busy := e.watch(start, storage.ListOptions{})
	other := e.watch(start, storage.ListOptions{})
	var want []ev
	for i := range writes {
		p := e.create(fmt.Sprintf("p%02d", i), nil)
		want = append(want, ev{watch.Added, p.Name, rvOf(t, p)})
	}
	// Nobody has read yet: both buffers are full and the dispatcher waits
	// (the others wait with it, as in kube's watch cache).
	done := make(chan []ev)
	go func() {
		var got []ev
		for range want {
			e, ok := <-other.ResultChan()
			if !ok {
				break
			}
			got = append(got, ev{e.Type, e.Object.(*corev1.Pod).Name, rvOf(t, e.Object)})
		}
		done <- got
	}()
	expectEvents(t, busy, want)
	if got := <-done; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("other watcher: got %v, want %v", got, want)
	}
	e.c.mu.RLock()
	n := len(e.c.watchers)
	e.c.mu.RUnlock()
	if n != 2 {
		t.Fatalf("%d watchers left, want 2 (none terminated)", n)
	}
}

// A watch served from the cache signals its initialization (the
// priority-and-fairness seat's release) once its initial events and
// backlog are handed over, not before.
func TestWatchSignalsInitializedAfterInitialEvents(t *testing.T) {
	e := newPodEnv(t, envOptions{})
	var last *corev1.Pod
	for i := range 5 {
		last = e.create(fmt.Sprintf("p%d", i), nil)
	}
	e.waitRevision(rvOf(t, last))
	initialized := make(chan struct{})
	var once sync.Once
	ctx := watchinit.WithSignal(e.ctx, func() { once.Do(func() { close(initialized) }) })
	w, err := e.c.Watch(ctx, "/pods", storage.ListOptions{ResourceVersion: "0", Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for i := range 5 {
		select {
		case <-initialized:
			t.Fatalf("initialized after %d of 5 initial events", i)
		default:
		}
		select {
		case ev := <-w.ResultChan():
			if ev.Type != watch.Added {
				t.Fatalf("initial event %d: %s, want ADDED", i, ev.Type)
			}
		case <-time.After(waitTimeout):
			t.Fatalf("initial event %d not delivered", i)
		}
	}
	select {
	case <-initialized:
	case <-time.After(waitTimeout):
		t.Fatal("no initialization signal after the initial events")
	}
	if n := e.c.stats.watchesDelegated.Load(); n != 0 {
		t.Fatalf("watch sent to the underlying store: %d, want 0", n)
	}
}

// TestSingleKeyListWhileWritten: a non-recursive list (one key) served from
// memory while the same key is rewritten must not read the cache's state
// after its lock is released (the race detector fails this test if it
// does; found by TestKubectlCustomResources under CI).
func TestSingleKeyListWhileWritten(t *testing.T) {
	e := newPodEnv(t, envOptions{})
	e.waitRevision(rvOf(t, e.create("a", nil)))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			e.relabel("a", map[string]string{"i": fmt.Sprint(i)})
		}
	}()
	for lists := 0; ; lists++ {
		select {
		case <-done:
			if lists == 0 {
				t.Fatal("no list ran while the key was written")
			}
			return
		default:
		}
		list := &corev1.PodList{}
		if err := e.c.GetList(e.ctx, podKey("a"), storage.ListOptions{ResourceVersion: "0"}, list); err != nil {
			t.Fatalf("list: %v", err)
		}
		if len(list.Items) != 1 || list.Items[0].Name != "a" {
			t.Fatalf("list of one key: got %d items", len(list.Items))
		}
	}
}
