package cacher

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
	"github.com/kapi-dev/kapi/pkg/storage/embedded"
	"github.com/kapi-dev/kapi/pkg/storage/etcd3"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// BenchmarkListPaths lists 10,000 pods in full and in pages of 500 (every
// page, following continue tokens), from the watch cache and from the
// store under it, on the memory backend and on embedded etcd (fsync on).
// One op is one whole list. The shared-items cases ask for the items as
// shared objects (what the API handler asks for: no deep copies), which
// the watch cache and the memory store hand out (etcd's store fills the
// list).
func BenchmarkListPaths(b *testing.B) {
	const objects, page = 10000, 500
	b.Run("memory", func(b *testing.B) {
		e := newPodEnv(b, envOptions{})
		fillPods(b, e.under, objects)
		e.waitRevision(e.b.Revision())
		benchListCases(b, e.ctx, e.c, e.under, objects, page)
	})
	b.Run("etcd", func(b *testing.B) {
		srv, err := embedded.Start(context.Background(), embedded.Config{
			DataDir: filepath.Join(b.TempDir(), "etcd"), Logger: quietLogger(),
		})
		if err != nil {
			b.Fatalf("start embedded etcd: %v", err)
		}
		b.Cleanup(srv.Close)
		r := storagetest.PodResource(storagetest.Codec())
		under := etcd3.New(srv.Client(), etcd3.Config{Codec: r.Codec, NewFunc: r.NewFunc, NewListFunc: r.NewListFunc, Logger: quietLogger()})
		fillPods(b, under, objects)
		c, err := New(Config{Storage: under, ResourcePrefix: r.Prefix, NewFunc: r.NewFunc, NewListFunc: r.NewListFunc, GetAttrs: r.GetAttrs, Logger: quietLogger()})
		if err != nil {
			b.Fatalf("new cacher: %v", err)
		}
		b.Cleanup(c.Stop)
		if err := c.WaitReady(context.Background()); err != nil {
			b.Fatalf("cacher not ready: %v", err)
		}
		benchListCases(b, context.Background(), c, under, objects, page)
	})
}

func benchListCases(b *testing.B, ctx context.Context, cache, under storage.Interface, objects int, page int64) {
	for _, tc := range []struct {
		name   string
		s      storage.Interface
		limit  int64
		shared bool // items handed out as shared objects (cacheable.WithItems), as to the API handler
	}{
		{"cache/full", cache, 0, false},
		{"cache/full/shared-items", cache, 0, true},
		{"cache/paged", cache, page, false},
		{"cache/paged/shared-items", cache, page, true},
		{"store/full", under, 0, false},
		{"store/paged", under, page, false},
		{"store/full/shared-items", under, 0, true},
		{"store/paged/shared-items", under, page, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				opts := storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: tc.limit}}
				for {
					list := &corev1.PodList{}
					lctx := ctx
					var items *cacheable.Items
					if tc.shared {
						lctx, items = cacheable.WithItems(ctx)
					}
					if err := tc.s.GetList(lctx, "/pods", opts, list); err != nil {
						b.Fatalf("list: %v", err)
					}
					n += len(list.Items)
					if items != nil {
						objs, _ := items.Get()
						n += len(objs)
					}
					if list.Continue == "" {
						break
					}
					opts.Predicate.Continue = list.Continue
				}
				if n != objects {
					b.Fatalf("got %d items, want %d", n, objects)
				}
			}
		})
	}
}

// fillPods creates n pods of about 1 KiB through s, 16 at a time.
func fillPods(b *testing.B, s storage.Interface, n int) {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < n; i += 16 {
				pod := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p%05d", i),
						Labels: map[string]string{"app": "bench", "i": strconv.Itoa(i)}},
					Spec: corev1.PodSpec{NodeName: "node", Containers: []corev1.Container{{Name: "c", Image: "busybox",
						Command: []string{"sh", "-c", "sleep 3600; echo a fairly long command line to pad the pod a little"}}}},
				}
				if err := s.Create(ctx, podKey(pod.Name), pod, &corev1.Pod{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatalf("create: %v", err)
	}
}
