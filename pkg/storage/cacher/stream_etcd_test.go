package cacher

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/etcd3"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// streamCounter is an etcd3 store whose watches count how the cache
// reads them: with Stream (on the reflector's goroutine) or ResultChan.
type streamCounter struct {
	*etcd3.Store
	streamed, chans atomic.Int32
}

type countedWatch struct {
	eventStreamer
	watch.Interface
	s *streamCounter
}

func (w *countedWatch) Stream(send func(watch.Event) bool, idle func() bool) bool {
	first := true
	return w.eventStreamer.Stream(func(ev watch.Event) bool {
		if first { // counted once it streams (Stream returns only at the end)
			first = false
			w.s.streamed.Add(1)
		}
		return send(ev)
	}, idle)
}

func (w *countedWatch) ResultChan() <-chan watch.Event {
	w.s.chans.Add(1)
	return w.Interface.ResultChan()
}

func (s *streamCounter) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	w, err := s.Store.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	return &countedWatch{eventStreamer: w.(eventStreamer), Interface: w, s: s}, nil
}

// WatchFromCurrent counts the watch the cache starts before its first list
// (see CurrentWatcher) as Watch counts the later ones.
func (s *streamCounter) WatchFromCurrent(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, uint64, error) {
	w, rev, err := s.Store.WatchFromCurrent(ctx, key, opts)
	if err != nil {
		return nil, 0, err
	}
	return &countedWatch{eventStreamer: w.(eventStreamer), Interface: w, s: s}, rev, nil
}

// TestReflectorStreamsEtcdConcurrentWriters: the cache's reflector reads
// its etcd watch with Stream (events applied on the reflector's
// goroutine, no hand-over from the etcd watch's own); under concurrent
// writers, single-key writes through the cache and multi-key etcd
// transactions mixed, every cache watcher (read with Stream or on its
// result channel) gets exactly the events a direct etcd watch from the
// same revision gets: each once, in revision order, a transaction's
// events together.
func TestReflectorStreamsEtcdConcurrentWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded etcd")
	}
	ctx := t.Context()
	srv := startEtcd(t, etcdProgressInterval, false)
	codec := storagetest.Codec()
	pr := storagetest.PodResource(codec)
	under := &streamCounter{Store: etcd3.New(srv.Client(), etcd3.Config{
		Codec: codec, NewFunc: pr.NewFunc, NewListFunc: pr.NewListFunc,
		Logger: quietLogger(), ProgressNotifyInterval: etcdProgressInterval,
	})}
	c, err := New(Config{
		Storage: under, ResourcePrefix: pr.Prefix, NewFunc: pr.NewFunc, NewListFunc: pr.NewListFunc,
		GetAttrs: pr.GetAttrs, BookmarkInterval: testBookmarkInterval, Logger: quietLogger(),
	})
	if err != nil {
		t.Fatalf("new cacher: %v", err)
	}
	t.Cleanup(c.Stop)
	if err := c.WaitReady(ctx); err != nil {
		t.Fatalf("cacher not ready: %v", err)
	}
	e := &podEnv{t: t, ctx: ctx, under: under, c: c}
	start := rvOf(t, e.create("first", nil))
	e.waitRevision(start)

	// The reference: etcd's own order, read directly.
	direct, err := under.Store.Watch(ctx, "/pods", storage.ListOptions{ResourceVersion: rvStr(start), Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Stop()
	ref := collect(t, direct)
	const streamed, chans = 3, 3
	var readers []*collector
	for i := range streamed + chans {
		wctx := ctx
		if i < streamed {
			wctx = storage.WithStreamedWatch(ctx)
		}
		w, err := c.Watch(wctx, "/pods", storage.ListOptions{ResourceVersion: rvStr(start), Recursive: true})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		if i < streamed {
			readers = append(readers, streamInto(t, w.(eventStreamer)))
		} else {
			readers = append(readers, collect(t, w))
		}
	}

	const writers, perWriter, txns = 4, 30, 10
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range perWriter {
				name := fmt.Sprintf("w%d-%d", g, i%6)
				out := &corev1.Pod{}
				var err error
				switch {
				case i < 6:
					err = c.Create(ctx, podKey(name), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}, out)
				case i >= perWriter-3:
					err = c.Delete(ctx, podKey(name), out, nil, func(context.Context, runtime.Object) error { return nil }, nil)
				default:
					err = c.GuaranteedUpdate(ctx, podKey(name), out, false, nil, func(in runtime.Object) (runtime.Object, error) {
						p := in.(*corev1.Pod)
						p.Labels = map[string]string{"i": strconv.Itoa(i)}
						return p, nil
					}, nil)
				}
				if err != nil {
					t.Errorf("write %s: %v", name, err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		// Transactions of three keys each, at one revision, as another
		// client could write them.
		for i := range txns {
			var ops []clientv3.Op
			for k := range 3 {
				name := fmt.Sprintf("txn-%d-%d", i, k)
				data, err := runtime.Encode(codec, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: k8stypes.UID("u-" + name)}})
				if err != nil {
					t.Errorf("encode %s: %v", name, err)
					return
				}
				ops = append(ops, clientv3.OpPut(etcdKey(name), string(data)))
			}
			if _, err := srv.Client().Txn(ctx).Then(ops...).Commit(); err != nil {
				t.Errorf("txn: %v", err)
				return
			}
		}
	})
	wg.Wait()
	last := rvOf(t, e.create("last", nil))
	e.waitRevision(last)

	want := writers*perWriter + 3*txns + 1
	waitFor := func(col *collector) []ev {
		deadline := time.Now().Add(waitTimeout)
		for {
			col.mu.Lock()
			n := len(col.evs)
			col.mu.Unlock()
			if n >= want || time.Now().After(deadline) {
				col.mu.Lock()
				defer col.mu.Unlock()
				return append([]ev(nil), col.evs...)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	refEvs := waitFor(ref)
	if len(refEvs) != want {
		t.Fatalf("direct etcd watch: %d events, want %d", len(refEvs), want)
	}
	for i := 1; i < len(refEvs); i++ {
		if refEvs[i].RV < refEvs[i-1].RV {
			t.Fatalf("direct etcd watch: event %d at revision %d after %d", i, refEvs[i].RV, refEvs[i-1].RV)
		}
	}
	for i, col := range readers {
		got := waitFor(col)
		if len(got) != len(refEvs) {
			t.Fatalf("cache watcher %d: %d events, want %d", i, len(got), len(refEvs))
		}
		for j := range got {
			if got[j] != refEvs[j] {
				t.Fatalf("cache watcher %d: event %d is %v, etcd's is %v", i, j, got[j], refEvs[j])
			}
		}
	}
	if n := under.streamed.Load(); n == 0 {
		t.Errorf("the reflector never streamed its etcd watch (%d read on channels)", under.chans.Load())
	}
}

// streamInto reads a watch with Stream into a collector (bookmarks left
// out), as the watch handler reads a cache watcher.
func streamInto(t *testing.T, w eventStreamer) *collector {
	c := &collector{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		w.Stream(func(e watch.Event) bool {
			if e.Type == watch.Bookmark {
				return true
			}
			if e.Type == watch.Error {
				t.Errorf("error event: %#v", e.Object)
				return false
			}
			p := e.Object.(*corev1.Pod)
			rv, _ := storage.ObjectResourceVersion(p)
			c.mu.Lock()
			c.evs = append(c.evs, ev{e.Type, p.Name, rv})
			c.mu.Unlock()
			return true
		}, func() bool { return true })
	}()
	return c
}
