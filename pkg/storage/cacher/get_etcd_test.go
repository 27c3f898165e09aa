package cacher

import (
	"context"
	"fmt"
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

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/etcd3"
	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// getEnv is a cacher of pods over an etcd3 store on embedded etcd (its
// etcd requests counted, its watch gated), and an etcd3 store of
// configmaps on the same etcd for writes to another resource.
type getEnv struct {
	t    testing.TB
	ctx  context.Context
	pods *etcd3.Store
	gate *gatedStore // between the cacher and pods
	cms  *etcd3.Store
	c    *Cacher
	reg  *prometheus.Registry
}

func newGetEnv(t testing.TB, fsync bool) *getEnv {
	t.Helper()
	srv := startEtcd(t, etcdProgressInterval, fsync)
	reg := prometheus.NewRegistry()
	m, err := storagemetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	codec := storagetest.Codec()
	pr, cr := storagetest.PodResource(codec), storagetest.ConfigMapResource(codec)
	pods := etcd3.New(srv.Client(), etcd3.Config{
		Codec: codec, NewFunc: pr.NewFunc, NewListFunc: pr.NewListFunc, Logger: quietLogger(),
		ProgressNotifyInterval: etcdProgressInterval, Metrics: m, GroupResource: schema.GroupResource{Resource: "pods"},
	})
	cms := etcd3.New(srv.Client(), etcd3.Config{
		Codec: codec, NewFunc: cr.NewFunc, NewListFunc: cr.NewListFunc, Logger: quietLogger(),
		ProgressNotifyInterval: etcdProgressInterval, GroupResource: schema.GroupResource{Resource: "configmaps"},
	})
	gate := newGatedStore(pods)
	c, err := New(Config{
		Storage: gate, ResourcePrefix: pr.Prefix, NewFunc: pr.NewFunc, NewListFunc: pr.NewListFunc,
		GetAttrs: pr.GetAttrs, BookmarkInterval: testBookmarkInterval, Logger: quietLogger(),
	})
	if err != nil {
		t.Fatalf("new cacher: %v", err)
	}
	t.Cleanup(func() { c.Stop(); gate.cut(); gate.wg.Wait() })
	if err := c.WaitReady(t.Context()); err != nil {
		t.Fatalf("cacher not ready: %v", err)
	}
	return &getEnv{t: t, ctx: context.Background(), pods: pods, gate: gate, cms: cms, c: c, reg: reg}
}

// etcdRequests counts the pods store's etcd requests by operation.
func (e *getEnv) etcdRequests() map[string]int {
	e.t.Helper()
	mfs, err := e.reg.Gather()
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]int{}
	for _, mf := range mfs {
		if mf.GetName() != "etcd_request_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "operation" {
					out[l.GetValue()] += int(m.GetHistogram().GetSampleCount())
				}
			}
		}
	}
	return out
}

func (e *getEnv) createPod(name, label string) *corev1.Pod {
	e.t.Helper()
	out := &corev1.Pod{}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"n": label}}}
	if err := e.c.Create(e.ctx, podKey(name), pod, out); err != nil {
		e.t.Fatalf("create %s: %v", name, err)
	}
	return out
}

// setLabel sets label n of pod name through the cacher and counts the
// times tryUpdate ran.
func (e *getEnv) setLabel(name, v string, tries *int) (*corev1.Pod, error) {
	out := &corev1.Pod{}
	err := e.c.GuaranteedUpdate(e.ctx, podKey(name), out, false, nil, func(in runtime.Object) (runtime.Object, error) {
		*tries++
		p := in.(*corev1.Pod)
		p.Labels = map[string]string{"n": v}
		return p, nil
	}, nil)
	return out, err
}

func (e *getEnv) waitRevision(rev uint64) {
	e.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for e.c.Revision() < rev {
		if time.Now().After(deadline) {
			e.t.Fatalf("cache at revision %d, want %d", e.c.Revision(), rev)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestConsistentGetLinearizableEtcd: a consistent get (resourceVersion "")
// started after a write was acknowledged to another client sees that write
// or a newer one, under concurrent writes to the resource and to another
// resource (which move etcd's revision without an event for the cache), on
// etcd. The gets are served from the cache (most of them; a get the cache
// cannot answer in time goes to etcd): without the wait for a revision
// read after the get arrived, the cache's watch lag would show old states.
func TestConsistentGetLinearizableEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd")
	}
	e := newGetEnv(t, false)
	const (
		writers = 4
		rounds  = 150
		readers = 8
	)
	for w := range writers {
		e.createPod("w"+strconv.Itoa(w), "0")
	}
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	// Writes to another resource: etcd's revision moves on, the cache
	// hears of it only through progress notifications.
	var bg sync.WaitGroup
	bg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm" + strconv.Itoa(i)}}
			if err := e.cms.Create(ctx, "/configmaps/ns/cm"+strconv.Itoa(i), cm, nil); err != nil && ctx.Err() == nil {
				t.Errorf("create configmap: %v", err)
				return
			}
		}
	})

	// An acknowledged write is handed to a reader (another client) through
	// a channel: the reader's get starts after the acknowledgement.
	type ack struct {
		name string
		n    int
		rv   uint64
	}
	acks := make(chan ack)
	var readerWG sync.WaitGroup
	var checked atomic.Int64
	for range readers {
		readerWG.Go(func() {
			for a := range acks {
				got := &corev1.Pod{}
				if err := e.c.Get(e.ctx, podKey(a.name), storage.GetOptions{}, got); err != nil {
					t.Errorf("get %s: %v", a.name, err)
					continue
				}
				n, _ := strconv.Atoi(got.Labels["n"])
				rv := rvOf(t, got)
				if n < a.n || rv < a.rv {
					t.Errorf("get %s after write %d (revision %d) acknowledged: got write %d (revision %d)", a.name, a.n, a.rv, n, rv)
				}
				checked.Add(1)
			}
		})
	}
	var writerWG sync.WaitGroup
	for w := range writers {
		name := "w" + strconv.Itoa(w)
		writerWG.Go(func() {
			for i := 1; i <= rounds; i++ {
				var tries int
				out, err := e.setLabel(name, strconv.Itoa(i), &tries)
				if err != nil {
					t.Errorf("update %s: %v", name, err)
					return
				}
				acks <- ack{name: name, n: i, rv: rvOf(t, out)}
			}
		})
	}
	writerWG.Wait()
	close(acks)
	readerWG.Wait()
	cancel()
	bg.Wait()
	cached, delegated := e.c.stats.getsCached.Load(), e.c.stats.getsDelegated.Load()
	t.Logf("%d gets checked: %d from the cache, %d from etcd; %d current revision reads", checked.Load(), cached, delegated, e.c.revs.reads.Load())
	if checked.Load() != writers*rounds {
		t.Fatalf("checked %d gets, want %d", checked.Load(), writers*rounds)
	}
	if cached < int64(writers*rounds)/2 {
		t.Fatalf("only %d of %d gets served from the cache", cached, writers*rounds)
	}
}

// TestConsistentGetWaitsForCache: a consistent get does not answer from a
// cache that has not seen an acknowledged write: with the cache's watch
// held, it falls back to etcd after ConsistentReadWait (and sees the
// write); once the watch flows, it is served from the cache.
func TestConsistentGetWaitsForCache(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd")
	}
	e := newGetEnv(t, false)
	e.c.cfg.ConsistentReadWait = 200 * time.Millisecond
	e.waitRevision(rvOf(t, e.createPod("a", "1")))
	got := &corev1.Pod{}
	if err := e.c.Get(e.ctx, podKey("a"), storage.GetOptions{}, got); err != nil || got.Labels["n"] != "1" {
		t.Fatalf("get: %v, label %q, want 1", err, got.Labels["n"])
	}
	if n := e.c.stats.getsCached.Load(); n != 1 {
		t.Fatalf("gets from the cache: %d, want 1", n)
	}

	e.gate.pause()
	var tries int
	if _, err := e.setLabel("a", "2", &tries); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := e.c.Get(e.ctx, podKey("a"), storage.GetOptions{}, got); err != nil || got.Labels["n"] != "2" {
		t.Fatalf("get with the cache held back: %v, label %q, want 2", err, got.Labels["n"])
	}
	if d := time.Since(start); d < e.c.cfg.ConsistentReadWait {
		t.Fatalf("get answered in %v, before ConsistentReadWait %v: not from etcd?", d, e.c.cfg.ConsistentReadWait)
	}
	if n := e.c.stats.getsDelegated.Load(); n != 1 {
		t.Fatalf("gets from etcd: %d, want 1", n)
	}
	// A deleted object is not found once the cache has caught up.
	if err := e.pods.Delete(e.ctx, podKey("a"), &corev1.Pod{}, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	e.gate.cut() // reopens the gate: the cacher re-watches
	err := e.c.Get(e.ctx, podKey("a"), storage.GetOptions{}, got)
	if !storage.IsNotFound(err) {
		t.Fatalf("get after delete: %v, want not found", err)
	}
	if err := e.c.Get(e.ctx, podKey("a"), storage.GetOptions{IgnoreNotFound: true}, got); err != nil || got.Name != "" {
		t.Fatalf("get after delete, IgnoreNotFound: %v, %q, want a zero object", err, got.Name)
	}
	if n := e.c.stats.getsCached.Load(); n != 3 {
		t.Fatalf("gets from the cache: %d, want 3", n)
	}
}

// TestGuaranteedUpdateFromCacheEtcd: an update of an object the cache holds
// starts from the cached object: one etcd request (the write) instead of a
// read and a write; a stale cached object costs one more (the failed write
// reads the key back) and never loses a write; an update that changes
// nothing writes nothing, whether the cached object was right or stale.
func TestGuaranteedUpdateFromCacheEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd")
	}
	e := newGetEnv(t, false)
	e.waitRevision(rvOf(t, e.createPod("a", "1")))
	count := func(f func()) map[string]int {
		t.Helper()
		before := e.etcdRequests()
		f()
		after := e.etcdRequests()
		for k, v := range before {
			after[k] -= v
			if after[k] == 0 {
				delete(after, k)
			}
		}
		return after
	}
	want := func(got map[string]int, want string) {
		t.Helper()
		var parts []string
		for _, op := range []string{"get", "list", "listStream", "getCurrentResourceVersion", "update", "create", "delete"} {
			if got[op] > 0 {
				parts = append(parts, fmt.Sprintf("%s=%d", op, got[op]))
			}
		}
		if s := strings.Join(parts, " "); s != want {
			t.Fatalf("etcd requests: %s, want %s", s, want)
		}
	}

	// The cache is current: one write.
	var out *corev1.Pod
	var tries int
	want(count(func() {
		var err error
		if out, err = e.setLabel("a", "2", &tries); err != nil {
			t.Fatal(err)
		}
	}), "update=1")
	if out.Labels["n"] != "2" || tries != 1 {
		t.Fatalf("update: label %q after %d tries, want 2 after 1", out.Labels["n"], tries)
	}
	e.waitRevision(rvOf(t, out))

	// Nothing changes: no write, the stored object's revision.
	tries = 0
	var same *corev1.Pod
	want(count(func() {
		var err error
		if same, err = e.setLabel("a", "2", &tries); err != nil {
			t.Fatal(err)
		}
	}), "update=1") // the conditional write that did not happen
	if rvOf(t, same) != rvOf(t, out) || tries != 1 {
		t.Fatalf("no-op update: revision %d after %d tries, want %d after 1", rvOf(t, same), tries, rvOf(t, out))
	}

	// A stale cached object: the write fails, reads the key back and is
	// retried on the current object.
	e.gate.pause()
	direct := &corev1.Pod{}
	err := e.pods.GuaranteedUpdate(e.ctx, podKey("a"), direct, false, nil, func(in runtime.Object) (runtime.Object, error) {
		p := in.(*corev1.Pod)
		p.Labels = map[string]string{"n": "3", "other": "kept"}
		return p, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tries = 0
	want(count(func() {
		out = &corev1.Pod{}
		if err := e.c.GuaranteedUpdate(e.ctx, podKey("a"), out, false, nil, func(in runtime.Object) (runtime.Object, error) {
			tries++
			p := in.(*corev1.Pod)
			p.Labels["n"] = "4"
			return p, nil
		}, nil); err != nil {
			t.Fatal(err)
		}
	}), "update=2")
	if tries != 2 || out.Labels["n"] != "4" || out.Labels["other"] != "kept" {
		t.Fatalf("update on a stale cached object: labels %v after %d tries, want n=4 and other=kept after 2", out.Labels, tries)
	}

	// A stale cached object, and the update makes the current one again:
	// no write.
	tries = 0
	want(count(func() {
		out = &corev1.Pod{}
		if err := e.c.GuaranteedUpdate(e.ctx, podKey("a"), out, false, nil, func(in runtime.Object) (runtime.Object, error) {
			tries++
			p := in.(*corev1.Pod)
			p.Labels = map[string]string{"n": "4", "other": "kept"}
			return p, nil
		}, nil); err != nil {
			t.Fatal(err)
		}
	}), "update=1")
	e.gate.cut()
	cur := &corev1.Pod{}
	if err := e.pods.Get(e.ctx, podKey("a"), storage.GetOptions{}, cur); err != nil {
		t.Fatal(err)
	}
	if rvOf(t, out) != rvOf(t, cur) || tries != 2 {
		t.Fatalf("no-op update on a stale cached object: revision %d after %d tries, want %d (no write) after 2", rvOf(t, out), tries, rvOf(t, cur))
	}

	// A precondition on the stale object's revision fails only after the
	// current object is read: the guess is never the reason of a conflict.
	e.waitRevision(rvOf(t, cur))
	e.gate.pause()
	if err := e.pods.GuaranteedUpdate(e.ctx, podKey("a"), direct, false, nil, func(in runtime.Object) (runtime.Object, error) {
		p := in.(*corev1.Pod)
		p.Labels["n"] = "5"
		return p, nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	rv := strconv.FormatUint(rvOf(t, direct), 10)
	tries = 0
	want(count(func() {
		out = &corev1.Pod{}
		if err := e.c.GuaranteedUpdate(e.ctx, podKey("a"), out, false, &storage.Preconditions{ResourceVersion: &rv},
			func(in runtime.Object) (runtime.Object, error) {
				tries++
				p := in.(*corev1.Pod)
				p.Labels["n"] = "6"
				return p, nil
			}, nil); err != nil {
			t.Fatal(err)
		}
	}), "get=1 update=1")
	if out.Labels["n"] != "6" || tries != 1 {
		t.Fatalf("update with a precondition on a stale cached object: label %q after %d tries, want 6 after 1", out.Labels["n"], tries)
	}
}
