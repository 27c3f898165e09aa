package cacher

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/etcd3"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// cutStore is a real store whose reflector watch the test can end after a
// number of events (as a broken connection would), and which says whether
// its watches mark revision ends (RevisionEndMarker) as the test chooses.
type cutStore struct {
	storage.Interface
	marks    bool
	cutAfter atomic.Int32 // > 0: end the current watches after that many more events
}

func (s *cutStore) MarksRevisionEnds() bool { return s.marks }

type cutWatch struct {
	out  chan watch.Event
	stop chan struct{}
	once sync.Once
}

func (w *cutWatch) ResultChan() <-chan watch.Event { return w.out }
func (w *cutWatch) Stop()                          { w.once.Do(func() { close(w.stop) }) }

func (s *cutStore) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	inner, err := s.Interface.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	w := &cutWatch{out: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(w.out)
		defer inner.Stop()
		for {
			select {
			case ev, ok := <-inner.ResultChan():
				if !ok {
					return
				}
				select {
				case w.out <- ev:
				case <-w.stop:
					return
				}
				if ev.Type != watch.Bookmark && s.cutAfter.Load() > 0 && s.cutAfter.Add(-1) == 0 {
					return // cut: the rest of the revision is not delivered
				}
			case <-w.stop:
				return
			}
		}
	}()
	return w, nil
}

// collector reads a watch into a list of events (bookmarks left out).
type collector struct {
	mu   sync.Mutex
	evs  []ev
	done chan struct{}
}

func collect(t *testing.T, w watch.Interface) *collector {
	c := &collector{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for e := range w.ResultChan() {
			if e.Type == watch.Bookmark {
				continue
			}
			if e.Type == watch.Error {
				t.Errorf("error event: %#v", e.Object)
				return
			}
			p := e.Object.(*corev1.Pod)
			rv, _ := storage.ObjectResourceVersion(p)
			c.mu.Lock()
			c.evs = append(c.evs, ev{e.Type, p.Name, rv})
			c.mu.Unlock()
		}
	}()
	return c
}

// expect waits until the collector has as many events as want and
// compares them.
func (c *collector) expect(t *testing.T, name string, want []ev) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		c.mu.Lock()
		got := slices.Clone(c.evs)
		c.mu.Unlock()
		if len(got) >= len(want) || time.Now().After(deadline) {
			if !slices.Equal(got, want) {
				t.Fatalf("%s: got events\n%v\nwant\n%v", name, got, want)
			}
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestMultiKeyTxnEtcd: an etcd transaction changing several keys of the
// cache's prefix at one revision (written with the etcd client, as another
// client or `etcdctl txn` would) is reflected whole in the cache's lists,
// gets, snapshots and every watcher, in etcd's order, with watches resuming
// from the revision before it or at it. "marked": over a store that marks
// revision ends (etcd3.Store), the revision is applied at once, even when
// the underlying watch breaks in the middle of it; "unmarked": events are
// applied one by one and still all kept.
func TestMultiKeyTxnEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded etcd")
	}
	for _, marked := range []bool{true, false} {
		name := "unmarked"
		if marked {
			name = "marked"
		}
		t.Run(name, func(t *testing.T) { testMultiKeyTxn(t, marked) })
	}
}

func testMultiKeyTxn(t *testing.T, marked bool) {
	ctx := t.Context()
	srv := startEtcd(t, etcdProgressInterval, false)
	codec := storagetest.Codec()
	pr := storagetest.PodResource(codec)
	under := &cutStore{marks: marked, Interface: etcd3.New(srv.Client(), etcd3.Config{
		Codec: codec, NewFunc: pr.NewFunc, NewListFunc: pr.NewListFunc,
		Logger: quietLogger(), ProgressNotifyInterval: etcdProgressInterval,
	})}
	c, err := New(Config{
		Storage: under, ResourcePrefix: pr.Prefix, NewFunc: pr.NewFunc, NewListFunc: pr.NewListFunc,
		GetAttrs: pr.GetAttrs, BookmarkInterval: testBookmarkInterval, Logger: quietLogger(),
		// Small buffers and budget: a watcher that does not read lags
		// and catches up from the event window.
		WatcherBuffer: 2, DispatchBudget: time.Millisecond, DispatchBudgetRefill: time.Millisecond,
	})
	if err != nil {
		t.Fatalf("new cacher: %v", err)
	}
	t.Cleanup(c.Stop)
	if err := c.WaitReady(ctx); err != nil {
		t.Fatalf("cacher not ready: %v", err)
	}
	e := &podEnv{t: t, ctx: ctx, under: under, c: c}
	x, y := map[string]string{"app": "x"}, map[string]string{"app": "y"}
	e.create("a", x)
	e.create("b", y)
	rv0 := rvOf(t, e.create("c", x))
	e.waitRevision(rv0)

	sel := storage.ListOptions{Predicate: storage.SelectionPredicate{Label: labels.SelectorFromSet(x)}}
	yes := true
	all := collect(t, e.watch(rvStr(rv0), storage.ListOptions{}))
	selected := collect(t, e.watch(rvStr(rv0), sel))
	initial := collect(t, e.watch("", storage.ListOptions{SendInitialEvents: &yes,
		Predicate: storage.SelectionPredicate{AllowWatchBookmarks: true}}))
	wKey, err := c.Watch(ctx, podKey("b"), storage.ListOptions{ResourceVersion: rvStr(rv0)})
	if err != nil {
		t.Fatalf("watch b: %v", err)
	}
	t.Cleanup(wKey.Stop)
	onlyB := collect(t, wKey)
	slow := e.watch(rvStr(rv0), storage.ListOptions{}) // read once the cache has it all

	put := func(name string, lbls map[string]string) clientv3.Op {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: lbls}}
		data, err := runtime.Encode(codec, pod)
		if err != nil {
			t.Fatalf("encode %s: %v", name, err)
		}
		return clientv3.OpPut(etcdKey(name), string(data))
	}
	txn := func(ops ...clientv3.Op) uint64 {
		resp, err := srv.Client().Txn(ctx).Then(ops...).Commit()
		if err != nil {
			t.Fatalf("txn: %v", err)
		}
		return uint64(resp.Header.Revision)
	}

	// One revision: delete a, add d, relabel b (into the selector),
	// delete c.
	r1 := txn(clientv3.OpDelete(etcdKey("a")), put("d", x), put("b", x), clientv3.OpDelete(etcdKey("c")))
	e.waitRevision(r1)
	want1 := []ev{{watch.Deleted, "a", r1}, {watch.Added, "d", r1}, {watch.Modified, "b", r1}, {watch.Deleted, "c", r1}}
	// Unmarked, the cache is at a transaction's revision from its first
	// event on and applies the others one by one: the reads below wait
	// until the last one reached a watcher (events are sent once applied).
	whole := func(want []ev) {
		t.Helper()
		if !marked {
			all.expect(t, "watch of all", want)
		}
	}
	whole(want1)

	checkList := func(opts storage.ListOptions, rev uint64, names ...string) {
		t.Helper()
		opts.Recursive = true
		list := &corev1.PodList{}
		if err := c.GetList(ctx, "/pods", opts, list); err != nil {
			t.Fatalf("list %+v: %v", opts, err)
		}
		var got []string
		for _, p := range list.Items {
			got = append(got, p.Name)
		}
		if !slices.Equal(got, names) || list.ResourceVersion != rvStr(rev) {
			t.Fatalf("list %+v: got %v at %s, want %v at %d", opts, got, list.ResourceVersion, names, rev)
		}
	}
	checkList(storage.ListOptions{}, r1, "b", "d")
	checkList(storage.ListOptions{ResourceVersion: "0"}, r1, "b", "d")
	checkList(storage.ListOptions{ResourceVersion: rvStr(r1), ResourceVersionMatch: metav1.ResourceVersionMatchExact}, r1, "b", "d")
	// A paginated list at r1 reads the next page from a snapshot of r1.
	page := &corev1.PodList{}
	if err := c.GetList(ctx, "/pods", storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 1}}, page); err != nil {
		t.Fatalf("first page: %v", err)
	}
	if len(page.Items) != 1 || page.Items[0].Name != "b" || page.Continue == "" {
		t.Fatalf("first page: %d items, continue %q", len(page.Items), page.Continue)
	}
	cont := page.Continue
	got := &corev1.Pod{}
	if err := c.Get(ctx, podKey("b"), storage.GetOptions{ResourceVersion: "0"}, got); err != nil || got.Labels["app"] != "x" || rvOf(t, got) != r1 {
		t.Fatalf("get b: %v, labels %v, rv %s; want app=x at %d", err, got.Labels, got.ResourceVersion, r1)
	}
	for _, name := range []string{"a", "c"} {
		if err := c.Get(ctx, podKey(name), storage.GetOptions{ResourceVersion: "0"}, &corev1.Pod{}); !storage.IsNotFound(err) {
			t.Fatalf("get %s: %v, want not found", name, err)
		}
	}

	// A second transaction; on the marked store the cacher's watch breaks
	// after two of its three events: the cache must not apply the half
	// revision, and gets it whole from a new watch.
	if marked {
		under.cutAfter.Store(2)
	}
	r2 := txn(put("e", y), put("f", x), clientv3.OpDelete(etcdKey("d")))
	e.waitRevision(r2)
	whole(append(slices.Clone(want1), ev{watch.Added, "e", r2}, ev{watch.Added, "f", r2}, ev{watch.Deleted, "d", r2}))
	checkList(storage.ListOptions{}, r2, "b", "e", "f")
	next := &corev1.PodList{}
	if err := c.GetList(ctx, "/pods", storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 1, Continue: cont}}, next); err != nil {
		t.Fatalf("next page: %v", err)
	}
	if len(next.Items) != 1 || next.Items[0].Name != "d" || next.ResourceVersion != rvStr(r1) {
		t.Fatalf("next page of the list at %d: %d items (%v) at %s, want d", r1, len(next.Items), next.Items, next.ResourceVersion)
	}
	// A last write, after which no watcher may have anything more.
	last := rvOf(t, e.create("z", x))
	want2 := []ev{{watch.Added, "e", r2}, {watch.Added, "f", r2}, {watch.Deleted, "d", r2}, {watch.Added, "z", last}}

	all.expect(t, "watch of all", append(slices.Clone(want1), want2...))
	slowGot := collect(t, slow)
	slowGot.expect(t, "watcher that lagged", append(slices.Clone(want1), want2...))
	selected.expect(t, "watch of app=x", []ev{
		{watch.Deleted, "a", r1}, {watch.Added, "d", r1}, {watch.Added, "b", r1}, {watch.Deleted, "c", r1},
		{watch.Added, "f", r2}, {watch.Deleted, "d", r2}, {watch.Added, "z", last},
	})
	initial.expect(t, "watch with initial events", append([]ev{{watch.Added, "a", rv0 - 2}, {watch.Added, "b", rv0 - 1}, {watch.Added, "c", rv0}},
		append(slices.Clone(want1), want2...)...))
	onlyB.expect(t, "watch of b", []ev{{watch.Modified, "b", r1}})

	// Resuming: from the revision before a transaction, all of it; from
	// the transaction's revision, nothing of it.
	collect(t, e.watch(rvStr(rv0), storage.ListOptions{})).expect(t, "watch from before r1", append(slices.Clone(want1), want2...))
	collect(t, e.watch(rvStr(r1), storage.ListOptions{})).expect(t, "watch from r1", want2)
	collect(t, e.watch(rvStr(r2), storage.ListOptions{})).expect(t, "watch from r2", want2[3:])
	if marked && under.cutAfter.Load() != 0 {
		t.Fatalf("the cacher's watch was not cut")
	}
}

// etcdKey is where etcd3.Store (default prefix) keeps pod name.
func etcdKey(name string) string { return etcd3.DefaultPrefix + podKey(name) }

func rvStr(rv uint64) string { return strconv.FormatUint(rv, 10) }
