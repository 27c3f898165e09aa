package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// BenchmarkGarbageCollection measures how fast the collector deletes the
// 10,000 ConfigMaps of one owner (a Secret): from the owner's DELETE until
// the last dependent is gone (background), or until the owner is gone
// after them (foreground). Creating the dependents is not timed.
//
//	go test -run '^$' -bench BenchmarkGarbageCollection -benchtime 1x ./test/e2e/
func BenchmarkGarbageCollection(b *testing.B) {
	const dependents = 10000
	for _, backend := range []struct {
		name string
		opts []kapitest.Option
	}{{"memory", nil}, {"etcd", []kapitest.Option{kapitest.WithEmbeddedEtcd()}}} {
		b.Run(backend.name, func(b *testing.B) {
			dir := b.TempDir()
			srv, err := kapitest.StartE(dir, slog.New(slog.NewTextHandler(io.Discard, nil)), backend.opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				if err := srv.Stop(); err != nil {
					b.Error(err)
				}
				_ = os.RemoveAll(dir)
			}()
			cfg := *srv.Config
			cfg.QPS = -1
			cs := kubernetes.NewForConfigOrDie(&cfg)
			for _, p := range []metav1.DeletionPropagation{metav1.DeletePropagationBackground, metav1.DeletePropagationForeground} {
				b.Run(string(p), func(b *testing.B) {
					var total time.Duration
					for i := range b.N {
						b.StopTimer()
						ns := fmt.Sprintf("gc-bench-%s-%d-%d", strings.ToLower(string(p)), time.Now().UnixNano()%1e9, i)
						if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
							b.Fatal(err)
						}
						owner := benchDependents(b, cs, ns, dependents, p == metav1.DeletePropagationForeground)
						wait := benchWatchCollected(b, cs, ns, owner, dependents)
						b.StartTimer()
						start := time.Now()
						if err := cs.CoreV1().Secrets(ns).Delete(context.Background(), owner, metav1.DeleteOptions{PropagationPolicy: &p}); err != nil {
							b.Fatal(err)
						}
						wait()
						total += time.Since(start)
					}
					b.ReportMetric(float64(dependents*b.N)/total.Seconds(), "dependents/s")
				})
			}
		})
	}
}

// benchDependents creates a Secret owning n ConfigMaps and returns its
// name.
func benchDependents(b *testing.B, cs kubernetes.Interface, ns string, n int, block bool) string {
	b.Helper()
	ctx := context.Background()
	owner, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	ref := metav1.OwnerReference{APIVersion: "v1", Kind: "Secret", Name: owner.Name, UID: owner.UID, BlockOwnerDeletion: &block}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	next := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range next {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("dep-%d", i), Labels: map[string]string{"set": "bench"}, OwnerReferences: []metav1.OwnerReference{ref}},
					Data: map[string]string{"key": "value"}}
				if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	return owner.Name
}

// benchWatchCollected starts watching the namespace's ConfigMaps and
// returns a function that waits until n of them were deleted and the
// owner is gone. Watching costs the server little; listing 10,000 objects
// to count them would compete with the collector.
func benchWatchCollected(b *testing.B, cs kubernetes.Interface, ns, owner string, n int) func() {
	b.Helper()
	ctx := context.Background()
	l, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		b.Fatal(err)
	}
	w, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion, LabelSelector: "set=bench"})
	if err != nil {
		b.Fatal(err)
	}
	return func() {
		defer w.Stop()
		deleted := 0
		timeout := time.After(5 * time.Minute)
		for deleted < n {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					b.Fatalf("watch ended after %d deletions", deleted)
				}
				if ev.Type == watch.Deleted {
					deleted++
				}
			case <-timeout:
				b.Fatalf("%d of %d dependents collected within 5 minutes", deleted, n)
			}
		}
		for {
			_, err := cs.CoreV1().Secrets(ns).Get(ctx, owner, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return
			}
			if err != nil {
				b.Fatal(err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
