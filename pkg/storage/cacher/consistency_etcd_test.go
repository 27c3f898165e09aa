package cacher

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/etcd3"
	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// dropStore is a real etcd3 store whose watches lose the events of the
// objects named "hidden…" while drop is set: a cache over it misses them,
// as a cache with a bug would, and so becomes inconsistent with etcd. Its
// other methods (progress requests, revision ends) are the store's.
type dropStore struct {
	*etcd3.Store
	drop atomic.Bool
}

type dropWatch struct {
	out  chan watch.Event
	stop chan struct{}
	once sync.Once
}

func (w *dropWatch) ResultChan() <-chan watch.Event { return w.out }
func (w *dropWatch) Stop()                          { w.once.Do(func() { close(w.stop) }) }

func (s *dropStore) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	inner, err := s.Store.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	return s.filter(inner), nil
}

// WatchFromCurrent is the store's (the cache's reflector watches with it),
// filtered.
func (s *dropStore) WatchFromCurrent(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, uint64, error) {
	inner, rev, err := s.Store.WatchFromCurrent(ctx, key, opts)
	if err != nil {
		return nil, 0, err
	}
	return s.filter(inner), rev, nil
}

func (s *dropStore) filter(inner watch.Interface) watch.Interface {
	w := &dropWatch{out: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(w.out)
		defer inner.Stop()
		for {
			select {
			case ev, ok := <-inner.ResultChan():
				if !ok {
					return
				}
				if ev.Type != watch.Bookmark && s.drop.Load() {
					if p, ok := ev.Object.(*corev1.Pod); ok && strings.HasPrefix(p.Name, "hidden") {
						continue
					}
				}
				select {
				case w.out <- ev:
				case <-w.stop:
					return
				}
			case <-w.stop:
				return
			}
		}
	}()
	return w
}

// checkEnv is a cacher of pods over a dropStore on embedded etcd, with
// metrics, and a configmap store on the same etcd.
type checkEnv struct {
	t     *testing.T
	ctx   context.Context
	reg   *prometheus.Registry
	store *dropStore
	cms   *etcd3.Store
	c     *Cacher
}

func newCheckEnv(t *testing.T, period time.Duration) *checkEnv {
	// No periodic progress: the cache's revision moves with its events
	// and the progress its reads ask for.
	srv := startEtcd(t, time.Hour, false)
	codec := storagetest.Codec()
	pr, cr := storagetest.PodResource(codec), storagetest.ConfigMapResource(codec)
	store := &dropStore{Store: etcd3.New(srv.Client(), etcd3.Config{Codec: codec, NewFunc: pr.NewFunc,
		NewListFunc: pr.NewListFunc, Logger: quietLogger(), ProgressNotifyInterval: time.Hour})}
	cms := etcd3.New(srv.Client(), etcd3.Config{Codec: codec, NewFunc: cr.NewFunc, NewListFunc: cr.NewListFunc,
		Logger: quietLogger(), ProgressNotifyInterval: time.Hour})
	reg := prometheus.NewRegistry()
	m, err := storagemetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{
		Storage: store, ResourcePrefix: pr.Prefix, NewFunc: pr.NewFunc, NewListFunc: pr.NewListFunc,
		GetAttrs: pr.GetAttrs, Logger: quietLogger(), ConsistentReadWait: 5 * time.Second,
		GroupResource: schema.GroupResource{Resource: "pods"}, Metrics: m,
		ConsistencyCheckPeriod: period,
	})
	if err != nil {
		t.Fatalf("new cacher: %v", err)
	}
	t.Cleanup(c.Stop)
	if err := c.WaitReady(t.Context()); err != nil {
		t.Fatalf("cacher not ready: %v", err)
	}
	return &checkEnv{t: t, ctx: context.Background(), reg: reg, store: store, cms: cms, c: c}
}

// create writes a pod to etcd (not through the cache) and returns its
// revision.
func (e *checkEnv) create(name string) uint64 {
	e.t.Helper()
	out := &corev1.Pod{}
	if err := e.store.Create(e.ctx, podKey(name), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}, out); err != nil {
		e.t.Fatalf("create %s: %v", name, err)
	}
	return rvOf(e.t, out)
}

func (e *checkEnv) delete(name string) {
	e.t.Helper()
	if err := e.store.Delete(e.ctx, podKey(name), &corev1.Pod{}, nil, nil, nil); err != nil {
		e.t.Fatalf("delete %s: %v", name, err)
	}
}

// checks returns the consistency check counts, by status.
func (e *checkEnv) checks() []string {
	return series(e.t, e.reg, "apiserver_storage_consistency_checks_total")
}

// list lists pods through the cacher and returns the names and whether
// the cache served it (not the store).
func (e *checkEnv) list(opts storage.ListOptions) (names []string, cont string, cached bool) {
	e.t.Helper()
	before := e.c.stats.listsCached.Load()
	opts.Recursive = true
	out := &corev1.PodList{}
	if err := e.c.GetList(e.ctx, "/pods", opts, out); err != nil {
		e.t.Fatalf("list %+v: %v", opts, err)
	}
	for _, p := range out.Items {
		names = append(names, p.Name)
	}
	return names, out.Continue, e.c.stats.listsCached.Load() > before
}

func exactAt(rev uint64) storage.ListOptions {
	return storage.ListOptions{ResourceVersion: rvStr(rev), ResourceVersionMatch: metav1.ResourceVersionMatchExact}
}

// TestConsistencyCheckEtcd: a check of a consistent cache succeeds; once
// the cache has missed an object it fails, exact lists and continue
// tokens are then served by etcd (with etcd's data, the missed object
// included) while consistent lists still come from the cache, as
// upstream's; a later successful check restores the cache's exact reads
// from its next state on. Each check is counted by status.
func TestConsistencyCheckEtcd(t *testing.T) {
	e := newCheckEnv(t, 0)
	e.create("p1")
	rev := e.create("p2")
	waitCaughtUp(e.ctx, t, e.c, rev)

	if got := e.c.checkConsistency(e.ctx); got != storagemetrics.ConsistencySuccess {
		t.Fatalf("first check: %q, want success", got)
	}
	if got, want := e.checks(), []string{`group="",resource="pods",status="success" 1`}; !slices.Equal(got, want) {
		t.Fatalf("checks: got %q, want %q", got, want)
	}
	if names, _, cached := e.list(exactAt(rev)); !cached || !slices.Equal(names, []string{"p1", "p2"}) {
		t.Fatalf("exact list before the failure: %v (cached %v), want [p1 p2] from the cache", names, cached)
	}

	// The cache misses hidden1; p3 moves it past hidden1's revision.
	e.store.drop.Store(true)
	e.create("hidden1")
	rev = e.create("p3")
	waitCaughtUp(e.ctx, t, e.c, rev)
	if got := e.c.checkConsistency(e.ctx); got != storagemetrics.ConsistencyFailure {
		t.Fatalf("check of the inconsistent cache: %q, want failure", got)
	}
	want := []string{`group="",resource="pods",status="failure" 1`, `group="",resource="pods",status="success" 1`}
	if got := e.checks(); !slices.Equal(got, want) {
		t.Fatalf("checks: got %q, want %q", got, want)
	}

	// Exact lists (and the legacy paginated list at N) go to etcd.
	withEtcd := []string{"hidden1", "p1", "p2", "p3"}
	if names, _, cached := e.list(exactAt(rev)); cached || !slices.Equal(names, withEtcd) {
		t.Fatalf("exact list after the failure: %v (cached %v), want %v from etcd", names, cached, withEtcd)
	}
	legacy := storage.ListOptions{ResourceVersion: rvStr(rev), Predicate: storage.SelectionPredicate{Limit: 10}}
	if names, _, cached := e.list(legacy); cached || !slices.Equal(names, withEtcd) {
		t.Fatalf("legacy exact list after the failure: %v (cached %v), want %v from etcd", names, cached, withEtcd)
	}
	// Consistent lists are still the cache's (upstream asks its snapshots
	// only for exact reads and continue tokens): counted, no fallback.
	if names, _, cached := e.list(storage.ListOptions{}); !cached || !slices.Equal(names, []string{"p1", "p2", "p3"}) {
		t.Fatalf("consistent list after the failure: %v (cached %v), want the cache's [p1 p2 p3]", names, cached)
	}
	// A paginated consistent list: its first page from the cache, the
	// next from etcd at that page's revision.
	names, cont, cached := e.list(storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 2}})
	if !cached || !slices.Equal(names, []string{"p1", "p2"}) || cont == "" {
		t.Fatalf("first page after the failure: %v %q (cached %v)", names, cont, cached)
	}
	names, _, cached = e.list(storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 2, Continue: cont}})
	if cached || !slices.Equal(names, []string{"p3"}) {
		t.Fatalf("next page after the failure: %v (cached %v), want [p3] from etcd", names, cached)
	}
	if got, want := series(t, e.reg, "apiserver_watch_cache_consistent_read_total"),
		[]string{`fallback="false",group="",resource="pods",success="true" 2`}; !slices.Equal(got, want) {
		t.Fatalf("consistent reads: got %q, want %q", got, want)
	}
	// Another failure counts again and changes nothing.
	if got := e.c.checkConsistency(e.ctx); got != storagemetrics.ConsistencyFailure {
		t.Fatalf("second check of the inconsistent cache: %q, want failure", got)
	}

	// hidden1 goes from etcd unseen too: the cache is right again.
	e.delete("hidden1")
	rev = e.create("p4")
	waitCaughtUp(e.ctx, t, e.c, rev)
	if got := e.c.checkConsistency(e.ctx); got != storagemetrics.ConsistencySuccess {
		t.Fatalf("check after the repair: %q, want success", got)
	}
	want = []string{`group="",resource="pods",status="failure" 2`, `group="",resource="pods",status="success" 2`}
	if got := e.checks(); !slices.Equal(got, want) {
		t.Fatalf("checks: got %q, want %q", got, want)
	}
	// The state the success saw is not served exactly (upstream's first
	// snapshot after it is the next event's) ...
	if names, _, cached := e.list(exactAt(rev)); cached || !slices.Equal(names, []string{"p1", "p2", "p3", "p4"}) {
		t.Fatalf("exact list at the checked state: %v (cached %v), want [p1 p2 p3 p4] from etcd", names, cached)
	}
	// ... the next one is.
	rev = e.create("p5")
	waitCaughtUp(e.ctx, t, e.c, rev)
	if names, _, cached := e.list(exactAt(rev)); !cached || !slices.Equal(names, []string{"p1", "p2", "p3", "p4", "p5"}) {
		t.Fatalf("exact list after the repair: %v (cached %v), want [p1 p2 p3 p4 p5] from the cache", names, cached)
	}
	names, cont, cached = e.list(storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 3}})
	if !cached || len(names) != 3 || cont == "" {
		t.Fatalf("first page after the repair: %v %q (cached %v)", names, cont, cached)
	}
	names, _, cached = e.list(storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 3, Continue: cont}})
	if !cached || !slices.Equal(names, []string{"p4", "p5"}) {
		t.Fatalf("next page after the repair: %v (cached %v), want [p4 p5] from the cache", names, cached)
	}
}

// TestConsistencyCheckErrorEtcd: a check whose etcd list fails (the
// cache's revision is compacted in etcd) counts "error" and leaves the
// cache as it was; so does a check of a stopped cache (not ready).
func TestConsistencyCheckErrorEtcd(t *testing.T) {
	e := newCheckEnv(t, 0)
	rev := e.create("p1")
	waitCaughtUp(e.ctx, t, e.c, rev)
	// Writes elsewhere move etcd on; without progress notifications the
	// pods cache stays at rev, which the compaction removes.
	out := &corev1.ConfigMap{}
	if err := e.cms.Create(e.ctx, "/configmaps/ns/cm", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}}, out); err != nil {
		t.Fatal(err)
	}
	if err := e.cms.GuaranteedUpdate(e.ctx, "/configmaps/ns/cm", out, false, nil, func(in runtime.Object) (runtime.Object, error) {
		cm := in.(*corev1.ConfigMap)
		cm.Data = map[string]string{"k": "v"}
		return cm, nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	cur := rvOf(t, out)
	if err := e.cms.Compact(e.ctx, cur); err != nil {
		t.Fatalf("compact at %d: %v", cur, err)
	}
	if got := e.c.Revision(); got >= cur {
		t.Fatalf("cache at revision %d, want it behind %d", got, cur)
	}
	if got := e.c.checkConsistency(e.ctx); got != storagemetrics.ConsistencyError {
		t.Fatalf("check at a compacted revision: %q, want error", got)
	}
	if got, want := e.checks(), []string{`group="",resource="pods",status="error" 1`}; !slices.Equal(got, want) {
		t.Fatalf("checks: got %q, want %q", got, want)
	}
	if e.c.exactReadsOff() {
		t.Fatal("an error marked the cache inconsistent")
	}
	// Once the cache has caught up, the check succeeds.
	waitCaughtUp(e.ctx, t, e.c, cur)
	if got := e.c.checkConsistency(e.ctx); got != storagemetrics.ConsistencySuccess {
		t.Fatalf("check after catching up: %q, want success", got)
	}
	e.c.Stop()
	if got := e.c.checkConsistency(e.ctx); got != storagemetrics.ConsistencyError {
		t.Fatalf("check of a stopped cache: %q, want error", got)
	}
	want := []string{`group="",resource="pods",status="error" 2`, `group="",resource="pods",status="success" 1`}
	if got := e.checks(); !slices.Equal(got, want) {
		t.Fatalf("checks: got %q, want %q", got, want)
	}
}

// TestConsistencyCheckerRunsAndStops: with a period the checker checks on
// its own, again and again, and stops with the cache.
func TestConsistencyCheckerRunsAndStops(t *testing.T) {
	const period = 20 * time.Millisecond
	e := newCheckEnv(t, period)
	e.create("p1")
	successes := func() float64 {
		for _, s := range e.checks() {
			if v, ok := strings.CutPrefix(s, `group="",resource="pods",status="success" `); ok {
				n, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
		}
		return 0
	}
	deadline := time.Now().Add(waitTimeout)
	for successes() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("checks after %v: %q, want 3 successes", waitTimeout, e.checks())
		}
		time.Sleep(5 * time.Millisecond)
	}
	e.c.Stop() // waits for the checker
	n := successes()
	time.Sleep(5 * period)
	if got := successes(); got != n {
		t.Fatalf("%v successes after Stop, %v at Stop", got, n)
	}
	if got := e.checks(); len(got) != 1 {
		t.Fatalf("checks: %q, want successes only", got)
	}
}

// TestConsistencyCheckJitter: each wait is between the period and 1.5
// times it.
func TestConsistencyCheckJitter(t *testing.T) {
	const d = time.Minute
	lo, hi := 2*d, time.Duration(0)
	for range 1000 {
		j := jitter(d)
		lo, hi = min(lo, j), max(hi, j)
	}
	if lo < d || hi > d*3/2 || hi-lo < d/4 {
		t.Fatalf("jitter(%v) in [%v, %v], want spread over [%v, %v]", d, lo, hi, d, d*3/2)
	}
}

// TestConsistencyDigest: the digests are upstream's, as the reference
// logs them ("Cache consistency check passed" at -v=3): an empty list's,
// and the services list holding only default/kubernetes at
// resourceVersion 68.
func TestConsistencyDigest(t *testing.T) {
	if got := newDigester().sum(); got != "cbf29ce484222325" {
		t.Errorf("empty list: %s", got)
	}
	d := newDigester()
	d.add(itemID{namespace: "default", name: "kubernetes", rv: "68"})
	if got := d.sum(); got != "29933f3d7d5d3798" {
		t.Errorf("default/kubernetes@68: %s, want the reference's 29933f3d7d5d3798", got)
	}
}
