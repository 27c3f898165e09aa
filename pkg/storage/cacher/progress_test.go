package cacher

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/etcd3"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// TestConsistentListAfterOtherWrites: after a write to ANOTHER resource, a
// consistent list is served from the cache, not from the underlying store:
// the cache asks the store for progress (ProgressRequester) and catches up
// with the write's revision through the resulting BOOKMARK. The stores'
// periodic progress notifications are an hour apart and ConsistentReadWait
// is shorter than the test's deadline, so without working progress requests
// every list would fall back to the store and the counters would say so.
func TestConsistentListAfterOtherWrites(t *testing.T) {
	tests := []struct {
		name string
		// stores returns the pods store to cache and a configmaps store on
		// the same backend (one revision).
		stores func(t *testing.T) (pods, cms storage.Interface)
	}{
		{"etcd3", etcdStores},
		{"memory", memoryStores},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods, cms := tt.stores(t)
			if _, ok := pods.(ProgressRequester); !ok {
				t.Fatalf("%T is not a ProgressRequester", pods)
			}
			pr := storagetest.PodResource(storagetest.Codec())
			c, err := New(Config{
				Storage: pods, ResourcePrefix: pr.Prefix, NewFunc: pr.NewFunc, NewListFunc: pr.NewListFunc,
				GetAttrs: pr.GetAttrs, Logger: quietLogger(), ConsistentReadWait: 5 * time.Second,
			})
			if err != nil {
				t.Fatalf("new cacher: %v", err)
			}
			t.Cleanup(func() { c.Stop(); logStats(t, c) })
			ctx := t.Context()
			if err := c.WaitReady(ctx); err != nil {
				t.Fatalf("cacher not ready: %v", err)
			}
			const lists = 5
			for i := range lists {
				out := &corev1.ConfigMap{}
				name := fmt.Sprintf("c%d", i)
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
				if err := cms.Create(ctx, "/configmaps/ns/"+name, cm, out); err != nil {
					t.Fatalf("create configmap: %v", err)
				}
				want := rvOf(t, out)
				list := &corev1.PodList{}
				if err := c.GetList(ctx, "/pods", storage.ListOptions{Recursive: true}, list); err != nil {
					t.Fatalf("list: %v", err)
				}
				if rv, _ := storage.ParseResourceVersion(list.ResourceVersion); rv < want {
					t.Fatalf("list %d at revision %d, want at least %d", i, rv, want)
				}
			}
			if cached, through := c.stats.listsCached.Load(), c.stats.listsDelegated.Load(); cached != lists || through != 0 {
				t.Fatalf("lists: got %d from the cache and %d from the store, want %d and 0", cached, through, lists)
			}
		})
	}
}

func etcdStores(t *testing.T) (pods, cms storage.Interface) {
	srv := startEtcd(t, time.Hour, false)
	codec := storagetest.Codec()
	pr, cr := storagetest.PodResource(codec), storagetest.ConfigMapResource(codec)
	pods = etcd3.New(srv.Client(), etcd3.Config{Codec: codec, NewFunc: pr.NewFunc, NewListFunc: pr.NewListFunc,
		Logger: quietLogger(), ProgressNotifyInterval: time.Hour})
	cms = etcd3.New(srv.Client(), etcd3.Config{Codec: codec, NewFunc: cr.NewFunc, NewListFunc: cr.NewListFunc,
		Logger: quietLogger(), ProgressNotifyInterval: time.Hour})
	return pods, cms
}

func memoryStores(t *testing.T) (pods, cms storage.Interface) {
	b := memory.NewBackend(memory.BackendConfig{Logger: quietLogger(), BookmarkInterval: time.Hour, CompactionInterval: -1})
	t.Cleanup(func() { _ = b.Close() })
	codec := storagetest.Codec()
	pr, cr := storagetest.PodResource(codec), storagetest.ConfigMapResource(codec)
	pods = b.Store(memory.Config{Codec: codec, NewFunc: pr.NewFunc, NewListFunc: pr.NewListFunc})
	cms = b.Store(memory.Config{Codec: codec, NewFunc: cr.NewFunc, NewListFunc: cr.NewListFunc})
	return pods, cms
}
