package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// TestBusyWatchersAreNotClosed: 200 client-go watchers of one namespace's
// ConfigMaps, 50 concurrent writers making 500 changes (five times the
// watch cache's per-watcher buffer). Every watcher must get every change,
// in order, without its stream being closed: busy but healthy watchers are
// waited for (within the dispatch budget), not cut off as slow. On the
// etcd backend, whose watches the watch cache serves. Nothing here is
// timed: the deadline is only a safety net against a hang.
func TestBusyWatchersAreNotClosed(t *testing.T) {
	const watchers, writers, writesEach = 200, 50, 10
	srv, err := etcdBackend.start()
	if err != nil {
		t.Fatalf("start the etcd backend: %v", err)
	}
	e := &env{backend: etcdBackend.name, srv: srv}
	e.cs = kubernetes.NewForConfigOrDie(e.config())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := e.newNamespace(t)
	list, err := e.cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}

	type result struct {
		events int
		closed bool   // the stream ended before every event came
		order  string // first out-of-order event, if any
	}
	results := make([]result, watchers)
	var wg sync.WaitGroup
	for i := range watchers {
		w, err := e.cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			t.Fatalf("watch %d: %v", i, err)
		}
		wg.Go(func() {
			defer w.Stop()
			r := &results[i]
			last := ""
			for r.events < writers*writesEach {
				ev, ok := <-w.ResultChan()
				if !ok {
					r.closed = ctx.Err() == nil
					return
				}
				if ev.Type == watch.Error {
					r.closed = true
					return
				}
				cm := ev.Object.(*corev1.ConfigMap)
				if last != "" && len(cm.ResourceVersion) == len(last) && cm.ResourceVersion <= last && r.order == "" {
					r.order = fmt.Sprintf("%s after %s", cm.ResourceVersion, last)
				}
				last = cm.ResourceVersion
				r.events++
			}
		})
	}

	var wwg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wwg.Go(func() {
			cms := e.cs.CoreV1().ConfigMaps(ns)
			cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("w%02d", i)}}, metav1.CreateOptions{})
			if err != nil {
				errs <- err
				return
			}
			for j := 1; j < writesEach; j++ {
				cm.Data = map[string]string{"n": fmt.Sprint(j)}
				if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wwg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("write: %v", err)
	}
	wg.Wait()
	closed, short := 0, 0
	for i, r := range results {
		if r.closed {
			closed++
		}
		if r.events != writers*writesEach {
			short++
			if short <= 3 {
				t.Errorf("watcher %d: %d of %d events (closed %v)", i, r.events, writers*writesEach, r.closed)
			}
		}
		if r.order != "" {
			t.Errorf("watcher %d: out of order: %s", i, r.order)
		}
	}
	if closed > 0 || short > 0 {
		t.Fatalf("%d of %d watchers were closed, %d missed events", closed, watchers, short)
	}
}
