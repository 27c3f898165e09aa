package cacher

import (
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// TestStartDuringWritesOnEtcd: a cache started while pods are created,
// updated and deleted under its prefix (the etcd3 store is a
// CurrentWatcher: its watch starts before the initial list, and the
// changes the list already holds come again on the watch) ends with exactly
// the store's state at the last write: no change lost, none applied twice
// (a change applied twice would show as a stale or resurrected object), and
// a watch from the cache's first revision sees every later change once.
func TestStartDuringWritesOnEtcd(t *testing.T) {
	pods, _ := etcdStores(t)
	if _, ok := pods.(CurrentWatcher); !ok {
		t.Fatalf("%T is not a CurrentWatcher", pods)
	}
	ctx := t.Context()
	pr := storagetest.PodResource(storagetest.Codec())
	// The writer keeps writing until the cache is ready and its first
	// revision read (at least n writes), then makes three more: the cache
	// starts during writes however slow the machine, and the watch from
	// its first revision has changes to see. (With a fixed 40 writes, a
	// loaded machine sometimes finished them before the cache was ready,
	// and the watch waited for a change that never came.)
	const n = 40
	var (
		wg      sync.WaitGroup
		lastRev uint64
	)
	started, firstRead := make(chan struct{}), make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		more := -1 // writes left once firstRead is closed
		for i := 0; more != 0; i++ {
			if i == n/4 {
				close(started)
			}
			if more > 0 {
				more--
			} else if i >= n {
				select {
				case <-firstRead:
					more = 2
				default:
				}
			}
			name := fmt.Sprintf("p%d", i)
			out := &corev1.Pod{}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
			if err := pods.Create(ctx, podKey(name), pod, out); err != nil {
				t.Errorf("create %s: %v", name, err)
				return
			}
			if i%3 == 1 {
				err := pods.GuaranteedUpdate(ctx, podKey(name), out, false, nil, func(in runtime.Object) (runtime.Object, error) {
					p := in.(*corev1.Pod)
					p.Labels = map[string]string{"i": fmt.Sprint(i)}
					return p, nil
				}, nil)
				if err != nil {
					t.Errorf("update %s: %v", name, err)
					return
				}
			}
			if i%5 == 2 {
				if err := pods.Delete(ctx, podKey(name), out, nil, nil, nil); err != nil {
					t.Errorf("delete %s: %v", name, err)
					return
				}
			}
			lastRev, _ = storage.ObjectResourceVersion(out)
		}
	}()
	<-started
	c, err := New(Config{
		Storage: pods, ResourcePrefix: pr.Prefix, NewFunc: pr.NewFunc, NewListFunc: pr.NewListFunc,
		GetAttrs: pr.GetAttrs, Logger: quietLogger(), ConsistentReadWait: 5 * time.Second,
	})
	if err != nil {
		close(firstRead)
		t.Fatalf("new cacher: %v", err)
	}
	t.Cleanup(c.Stop)
	if err := c.WaitReady(ctx); err != nil {
		close(firstRead)
		t.Fatalf("cacher not ready: %v", err)
	}
	first := c.Revision()
	close(firstRead)
	w, err := c.Watch(ctx, "/pods", storage.ListOptions{ResourceVersion: fmt.Sprint(first), Recursive: true})
	if err != nil {
		t.Fatalf("watch from %d: %v", first, err)
	}
	defer w.Stop()
	wg.Wait()
	if t.Failed() {
		return
	}
	deadline := time.Now().Add(waitTimeout)
	for c.Revision() < lastRev {
		if time.Now().After(deadline) {
			t.Fatalf("cache at revision %d, want %d", c.Revision(), lastRev)
		}
		time.Sleep(time.Millisecond)
	}

	byName := func(l *corev1.PodList) map[string]string {
		m := map[string]string{}
		for _, p := range l.Items {
			m[p.Name] = p.ResourceVersion + " " + fmt.Sprint(p.Labels)
		}
		return m
	}
	want := &corev1.PodList{}
	if err := pods.GetList(ctx, "/pods", storage.ListOptions{Recursive: true}, want); err != nil {
		t.Fatalf("store list: %v", err)
	}
	got := &corev1.PodList{}
	if err := c.GetList(ctx, "/pods", storage.ListOptions{Recursive: true, ResourceVersion: "0"}, got); err != nil {
		t.Fatalf("cache list: %v", err)
	}
	if g, w := byName(got), byName(want); !maps.Equal(g, w) {
		t.Fatalf("cache after the writes:\n got %v\nwant %v", g, w)
	}

	// The watch from the cache's first revision: every change after it,
	// once, in revision order, ending at the last write.
	var prev uint64
	for prev < lastRev {
		e := nextEvent(t, w)
		if e.RV <= prev || e.RV <= first {
			t.Fatalf("event %s after revision %d (cache started at %d)", e, prev, first)
		}
		prev = e.RV
	}
	if prev != lastRev {
		t.Fatalf("last event at %d, want %d", prev, lastRev)
	}
}
