package cacher

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
)

// TestListHandsOutSharedItems lists through the cache with and without
// cacheable.WithItems, in full, in pages and with a selector: with it, the
// list gets the same metadata (resourceVersion, continue token, remaining
// count) and no items, and the items handed out are the same objects, in
// order, each one the entry's own Object (the same on the next list, so
// its encodings are reused); a write replaces the written entry's.
func TestListHandsOutSharedItems(t *testing.T) {
	e := newPodEnv(t, envOptions{})
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		e.create(n, map[string]string{"app": n})
	}
	e.waitRevision(e.b.Revision())

	for _, opts := range []storage.ListOptions{
		{Recursive: true},
		{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 2}},
		{Recursive: true, Predicate: storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"app": "c"})}},
		{Recursive: false},
	} {
		key := "/pods"
		if !opts.Recursive {
			key = podKey("b")
		}
		want := &corev1.PodList{}
		if err := e.c.GetList(e.ctx, key, opts, want); err != nil {
			t.Fatal(err)
		}
		ctx, items := cacheable.WithItems(e.ctx)
		got := &corev1.PodList{}
		if err := e.c.GetList(ctx, key, opts, got); err != nil {
			t.Fatal(err)
		}
		objs, ok := items.Get()
		if !ok {
			t.Fatalf("%+v: items not handed out", opts)
		}
		if len(got.Items) != 0 {
			t.Errorf("%+v: list has %d items, want none", opts, len(got.Items))
		}
		if !equality.Semantic.DeepEqual(got.ListMeta, want.ListMeta) {
			t.Errorf("%+v: list metadata %+v, want %+v", opts, got.ListMeta, want.ListMeta)
		}
		if len(objs) != len(want.Items) || len(objs) == 0 {
			t.Fatalf("%+v: %d shared items, want %d", opts, len(objs), len(want.Items))
		}
		for i, o := range objs {
			if !equality.Semantic.DeepEqual(o.GetObject(), &want.Items[i]) {
				t.Errorf("%+v: item %d differs: %+v, want %+v", opts, i, o.GetObject(), &want.Items[i])
			}
		}
		ctx2, again := cacheable.WithItems(e.ctx)
		if err := e.c.GetList(ctx2, key, opts, &corev1.PodList{}); err != nil {
			t.Fatal(err)
		}
		objs2, _ := again.Get()
		if !reflect.DeepEqual(objs, objs2) || objs[0] != objs2[0] {
			t.Errorf("%+v: a second list handed out other objects", opts)
		}
	}

	ctx, items := cacheable.WithItems(e.ctx)
	if err := e.c.GetList(ctx, "/pods", storage.ListOptions{Recursive: true}, &corev1.PodList{}); err != nil {
		t.Fatal(err)
	}
	before, _ := items.Get()
	e.relabel("b", map[string]string{"app": "changed"})
	e.waitRevision(e.b.Revision())
	ctx, items = cacheable.WithItems(e.ctx)
	if err := e.c.GetList(ctx, "/pods", storage.ListOptions{Recursive: true}, &corev1.PodList{}); err != nil {
		t.Fatal(err)
	}
	after, _ := items.Get()
	if after[1] == before[1] {
		t.Error("the updated entry's shared object was kept")
	}
	if got := after[1].GetObject().(*corev1.Pod).Labels["app"]; got != "changed" {
		t.Errorf("updated item has app=%q", got)
	}
	for _, i := range []int{0, 2, 3, 4} {
		if after[i] != before[i] {
			t.Errorf("item %d: unchanged entry's shared object replaced", i)
		}
	}
}
