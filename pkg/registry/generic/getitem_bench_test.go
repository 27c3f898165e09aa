package generic

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
	"github.com/kapi-dev/kapi/pkg/storage/cacher"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// BenchmarkGetWithItem is the store's part of a GET the handler serves
// from the watch cache's kept item (cacheable.WithItem), at
// resourceVersion "0" (no wait for a revision): the key, the cache's
// lookup and what the store makes for it.
func BenchmarkGetWithItem(b *testing.B) {
	be := memory.NewBackend(memory.BackendConfig{CompactionInterval: -1})
	defer be.Close()
	newFunc := func() runtime.Object { return &corev1.ConfigMap{} }
	newList := func() runtime.Object { return &corev1.ConfigMapList{} }
	c, err := cacher.New(cacher.Config{
		Storage:        be.Store(memory.Config{Codec: testCodec, NewFunc: newFunc, NewListFunc: newList}),
		ResourcePrefix: "/configmaps",
		NewFunc:        newFunc,
		NewListFunc:    newList,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Stop()
	if err := c.WaitReady(context.Background()); err != nil {
		b.Fatal(err)
	}
	store := &Store{
		NewFunc:                   newFunc,
		NewListFunc:               newList,
		DefaultQualifiedResource:  corev1.Resource("configmaps"),
		SingularQualifiedResource: corev1.Resource("configmap"),
		CreateStrategy:            configMapStrategy{},
		UpdateStrategy:            configMapStrategy{},
		Storage:                   c,
	}
	if err := store.Complete(); err != nil {
		b.Fatal(err)
	}
	ctx := request.WithNamespace(context.Background(), "ns")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}, Data: map[string]string{"k": "v"}}
	if _, err := store.Create(ctx, cm, nil, &metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	opts := &metav1.GetOptions{ResourceVersion: "0"}
	for tries := 0; ; tries++ { // until the cache has the object
		getCtx, item := cacheable.WithItem(ctx)
		if _, err := store.Get(getCtx, "a", opts); err == nil {
			if _, ok := item.Get(); ok {
				break
			}
		}
		if tries > 1000 {
			b.Fatal("the cache never served the item")
		}
		time.Sleep(time.Millisecond)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		getCtx, item := cacheable.WithItem(ctx)
		if _, err := store.Get(getCtx, "a", opts); err != nil {
			b.Fatal(err)
		}
		if _, ok := item.Get(); !ok {
			b.Fatal("not served from the item")
		}
	}
}
