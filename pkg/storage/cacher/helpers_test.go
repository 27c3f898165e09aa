package cacher

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/embedded"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// waitTimeout bounds every wait for an event or a state in these tests.
const waitTimeout = 10 * time.Second

// podEnv is a cacher of pods over a memory backend, plus the backend's
// configmap store for writes to another resource.
type podEnv struct {
	t     testing.TB
	ctx   context.Context
	b     *memory.Backend
	under storage.Interface // what the cacher caches
	cms   *memory.Store
	c     *Cacher
}

type envOptions struct {
	cacher  func(*Config)
	backend func(*memory.BackendConfig)
	wrap    func(storage.Interface) storage.Interface // wraps the pods store
}

func newPodEnv(t testing.TB, o envOptions) *podEnv {
	t.Helper()
	bcfg := memory.BackendConfig{
		Logger:             quietLogger(),
		BookmarkInterval:   testBookmarkInterval,
		CompactionInterval: -1,
		FreshWait:          500 * time.Millisecond,
	}
	if o.backend != nil {
		o.backend(&bcfg)
	}
	b := memory.NewBackend(bcfg)
	t.Cleanup(func() { _ = b.Close() })
	codec := storagetest.Codec()
	pr, cr := storagetest.PodResource(codec), storagetest.ConfigMapResource(codec)
	var under storage.Interface = b.Store(memory.Config{Codec: codec, NewFunc: pr.NewFunc, NewListFunc: pr.NewListFunc})
	if o.wrap != nil {
		under = o.wrap(under)
	}
	cfg := Config{
		Storage:          under,
		ResourcePrefix:   pr.Prefix,
		NewFunc:          pr.NewFunc,
		NewListFunc:      pr.NewListFunc,
		GetAttrs:         pr.GetAttrs,
		BookmarkInterval: testBookmarkInterval,
		Logger:           quietLogger(),
	}
	if o.cacher != nil {
		o.cacher(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("new cacher: %v", err)
	}
	t.Cleanup(c.Stop)
	ctx := context.Background()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatalf("cacher not ready: %v", err)
	}
	return &podEnv{
		t: t, ctx: ctx, b: b, under: under, c: c,
		cms: b.Store(memory.Config{Codec: codec, NewFunc: cr.NewFunc, NewListFunc: cr.NewListFunc}),
	}
}

func podKey(name string) string { return "/pods/ns/" + name }

func (e *podEnv) create(name string, lbls map[string]string) *corev1.Pod {
	e.t.Helper()
	out := &corev1.Pod{}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: lbls}}
	if err := e.c.Create(e.ctx, podKey(name), pod, out); err != nil {
		e.t.Fatalf("create %s: %v", name, err)
	}
	return out
}

func (e *podEnv) relabel(name string, lbls map[string]string) *corev1.Pod {
	e.t.Helper()
	out := &corev1.Pod{}
	err := e.c.GuaranteedUpdate(e.ctx, podKey(name), out, false, nil, func(in runtime.Object) (runtime.Object, error) {
		p := in.(*corev1.Pod)
		p.Labels = lbls
		return p, nil
	}, nil)
	if err != nil {
		e.t.Fatalf("update %s: %v", name, err)
	}
	return out
}

func (e *podEnv) delete(name string) *corev1.Pod {
	e.t.Helper()
	out := &corev1.Pod{}
	if err := e.c.Delete(e.ctx, podKey(name), out, nil, nil, nil); err != nil {
		e.t.Fatalf("delete %s: %v", name, err)
	}
	return out
}

// createCM writes to another resource and returns the revision.
func (e *podEnv) createCM(name string) uint64 {
	e.t.Helper()
	out := &corev1.ConfigMap{}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	if err := e.cms.Create(e.ctx, "/configmaps/ns/"+name, cm, out); err != nil {
		e.t.Fatalf("create configmap %s: %v", name, err)
	}
	return rvOf(e.t, out)
}

func (e *podEnv) watch(rv string, opts storage.ListOptions) watch.Interface {
	e.t.Helper()
	opts.ResourceVersion = rv
	opts.Recursive = true
	w, err := e.c.Watch(e.ctx, "/pods", opts)
	if err != nil {
		e.t.Fatalf("watch from %q: %v", rv, err)
	}
	e.t.Cleanup(w.Stop)
	return w
}

// waitRevision polls until the cache is at rev or newer.
func (e *podEnv) waitRevision(rev uint64) {
	e.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for e.c.Revision() < rev {
		if time.Now().After(deadline) {
			e.t.Fatalf("cache at revision %d, want %d", e.c.Revision(), rev)
		}
		time.Sleep(time.Millisecond)
	}
}

func rvOf(t testing.TB, obj runtime.Object) uint64 {
	t.Helper()
	rv, err := storage.ObjectResourceVersion(obj)
	if err != nil {
		t.Fatalf("resourceVersion of %T: %v", obj, err)
	}
	return rv
}

// ev is an event as tests compare them.
type ev struct {
	Type watch.EventType
	Name string
	RV   uint64
}

func (v ev) String() string { return fmt.Sprintf("%s %s@%d", v.Type, v.Name, v.RV) }

func evOf(t testing.TB, e watch.Event) ev {
	t.Helper()
	if e.Type == watch.Error {
		t.Fatalf("error event: %#v", e.Object)
	}
	p, ok := e.Object.(*corev1.Pod)
	if !ok {
		t.Fatalf("event object %T, want *corev1.Pod", e.Object)
	}
	return ev{e.Type, p.Name, rvOf(t, p)}
}

// nextEvent returns the next non-bookmark event; it fails on a closed
// channel or after waitTimeout.
func nextEvent(t testing.TB, w watch.Interface) ev {
	t.Helper()
	timer := time.NewTimer(waitTimeout)
	defer timer.Stop()
	for {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed, want an event")
			}
			if e.Type == watch.Bookmark {
				continue
			}
			return evOf(t, e)
		case <-timer.C:
			t.Fatalf("no event within %v", waitTimeout)
		}
	}
}

func expectEvents(t testing.TB, w watch.Interface, want []ev) {
	t.Helper()
	for i, wv := range want {
		if got := nextEvent(t, w); got != wv {
			t.Fatalf("event %d: got %v, want %v", i, got, wv)
		}
	}
}

// expectClosed drains w until its result channel closes and returns how
// many events it got meanwhile.
func expectClosed(t testing.TB, w watch.Interface) int {
	t.Helper()
	timer := time.NewTimer(waitTimeout)
	defer timer.Stop()
	n := 0
	for {
		select {
		case _, ok := <-w.ResultChan():
			if !ok {
				return n
			}
			n++
		case <-timer.C:
			t.Fatalf("watch not closed within %v (%d events)", waitTimeout, n)
		}
	}
}

// gatedStore is a real store whose watches the test can pause (events are
// held in the store) and cut (their result channels close), to simulate a
// partition of the cacher from its store.
type gatedStore struct {
	storage.Interface
	mu      sync.Mutex
	open    chan struct{} // closed while events flow
	watches map[*gatedWatch]struct{}
	wg      sync.WaitGroup
}

func newGatedStore(s storage.Interface) *gatedStore {
	open := make(chan struct{})
	close(open)
	return &gatedStore{Interface: s, open: open, watches: map[*gatedWatch]struct{}{}}
}

type gatedWatch struct {
	inner watch.Interface
	out   chan watch.Event
	stop  chan struct{}
	once  sync.Once
}

func (w *gatedWatch) ResultChan() <-chan watch.Event { return w.out }
func (w *gatedWatch) Stop()                          { w.once.Do(func() { close(w.stop) }) }

func (g *gatedStore) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	inner, err := g.Interface.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	w := &gatedWatch{inner: inner, out: make(chan watch.Event), stop: make(chan struct{})}
	g.mu.Lock()
	g.watches[w] = struct{}{}
	g.mu.Unlock()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer close(w.out)
		defer inner.Stop()
		for {
			var e watch.Event
			select {
			case ev, ok := <-inner.ResultChan():
				if !ok {
					return
				}
				e = ev
			case <-w.stop:
				return
			}
			// A paused gate holds the event (and every later one).
			g.mu.Lock()
			open := g.open
			g.mu.Unlock()
			select {
			case <-open:
			case <-w.stop:
				return
			}
			select {
			case w.out <- e:
			case <-w.stop:
				return
			}
		}
	}()
	return w, nil
}

func (g *gatedStore) pause() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open = make(chan struct{})
}

// cut ends every watch opened so far and reopens the gate for new ones.
func (g *gatedStore) cut() {
	g.mu.Lock()
	ws := g.watches
	g.watches = map[*gatedWatch]struct{}{}
	g.mu.Unlock()
	// Stop first: held events must not slip through the reopened gate.
	for w := range ws {
		w.Stop()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

// startEtcd starts an embedded etcd in tb's temporary directory, stopped
// when tb ends, sending watch progress every progress (time.Hour: none
// unasked), with fsync off unless fsync.
func startEtcd(tb testing.TB, progress time.Duration, fsync bool) *embedded.Server {
	tb.Helper()
	srv, err := embedded.Start(context.Background(), embedded.Config{
		DataDir:                     filepath.Join(tb.TempDir(), "etcd"),
		Logger:                      quietLogger(),
		UnsafeNoFsync:               !fsync,
		WatchProgressNotifyInterval: progress,
	})
	if err != nil {
		tb.Fatalf("start embedded etcd: %v", err)
	}
	tb.Cleanup(srv.Close)
	return srv
}
