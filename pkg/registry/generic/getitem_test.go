package generic

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
	"github.com/kapi-dev/kapi/pkg/storage/cacher"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// TestGetWithItemMakesNoObject: a GET whose reader takes the watch
// cache's entry (cacheable.WithItem) makes no empty object with NewFunc:
// the store returns nil and the Item holds the object. A get without an
// Item makes one and returns it filled.
func TestGetWithItemMakesNoObject(t *testing.T) {
	b := newBackend(t)
	made := 0
	store := newConfigMapStore(t, b, func(s *Store) {
		newFunc := func() runtime.Object { return &corev1.ConfigMap{} }
		newList := func() runtime.Object { return &corev1.ConfigMapList{} }
		c, err := cacher.New(cacher.Config{
			Storage:        b.Store(memory.Config{Codec: testCodec, NewFunc: newFunc, NewListFunc: newList}),
			ResourcePrefix: "/configmaps",
			NewFunc:        newFunc,
			NewListFunc:    newList,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Stop)
		if err := c.WaitReady(context.Background()); err != nil {
			t.Fatal(err)
		}
		s.Storage = c
		s.NewFunc = func() runtime.Object { made++; return newFunc() }
	})
	ctx := request.WithNamespace(context.Background(), "ns")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}}
	if _, err := store.Create(ctx, cm, nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	made = 0
	getCtx, item := cacheable.WithItem(ctx)
	obj, err := store.Get(getCtx, "a", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	shared, ok := item.Get()
	if !ok {
		t.Fatal("the entry was not handed to the Item")
	}
	if obj != nil || made != 0 {
		t.Errorf("with an Item: got %v and %d objects made, want nil and none", obj, made)
	}
	if got := shared.GetObject().(*corev1.ConfigMap).Name; got != "a" {
		t.Errorf("the Item holds %q, want a", got)
	}

	made = 0
	obj, err = store.Get(ctx, "a", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := obj.(*corev1.ConfigMap); !ok || got.Name != "a" || made != 1 {
		t.Errorf("without an Item: got %#v and %d objects made, want configmap a and one", obj, made)
	}
}
