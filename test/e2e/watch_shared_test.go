package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Several watchers of one resource receive the same event objects from the
// watch cache; encoding them concurrently must not race (run with -race).
func TestConcurrentWatchersOfOneResource(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ns := e.newNamespace(t)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		const watchers, writes = 6, 10
		var wg sync.WaitGroup
		ready := make(chan struct{}, watchers)
		errs := make(chan error, watchers)
		for i := 0; i < watchers; i++ {
			w, err := e.cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer w.Stop()
				ready <- struct{}{}
				seen := 0
				for ev := range w.ResultChan() {
					if _, ok := ev.Object.(*corev1.ConfigMap); ok {
						seen++
					}
					if seen == writes {
						return
					}
				}
				errs <- fmt.Errorf("watch ended after %d of %d events", seen, writes)
			}()
		}
		for i := 0; i < watchers; i++ {
			<-ready
		}
		for i := 0; i < writes; i++ {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c%d", i)}}
			if _, err := e.cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}
