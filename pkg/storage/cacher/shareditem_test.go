package cacher

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
)

// TestGetHandsOutSharedItem gets through the cache with and without
// cacheable.WithItem, consistent ("") and at "0": with it, the object
// given is left empty and the entry's own Object is handed out, equal to
// what a plain get returns and the same on the next get (so its
// encodings are reused); a write replaces it. A missing key hands out
// nothing (not found, as before).
func TestGetHandsOutSharedItem(t *testing.T) {
	e := newPodEnv(t, envOptions{})
	e.create("a", nil)
	e.create("b", nil)
	e.waitRevision(e.b.Revision())

	for _, rv := range []string{"", "0"} {
		opts := storage.GetOptions{ResourceVersion: rv}
		want := &corev1.Pod{}
		if err := e.c.Get(e.ctx, podKey("b"), opts, want); err != nil {
			t.Fatal(err)
		}
		ctx, item := cacheable.WithItem(e.ctx)
		got := &corev1.Pod{}
		if err := e.c.Get(ctx, podKey("b"), opts, got); err != nil {
			t.Fatal(err)
		}
		obj, ok := item.Get()
		if !ok {
			t.Fatalf("rv %q: object not handed out", rv)
		}
		if got.Name != "" {
			t.Errorf("rv %q: the given object was filled: %+v", rv, got)
		}
		if !equality.Semantic.DeepEqual(obj.GetObject(), want) {
			t.Errorf("rv %q: shared object %+v, want %+v", rv, obj.GetObject(), want)
		}
		ctx2, again := cacheable.WithItem(e.ctx)
		if err := e.c.Get(ctx2, podKey("b"), opts, &corev1.Pod{}); err != nil {
			t.Fatal(err)
		}
		if obj2, _ := again.Get(); obj2 != obj {
			t.Errorf("rv %q: a second get handed out another object", rv)
		}
	}

	ctx, item := cacheable.WithItem(e.ctx)
	if err := e.c.Get(ctx, podKey("b"), storage.GetOptions{}, &corev1.Pod{}); err != nil {
		t.Fatal(err)
	}
	before, _ := item.Get()
	e.relabel("b", map[string]string{"app": "changed"})
	e.waitRevision(e.b.Revision())
	ctx, item = cacheable.WithItem(e.ctx)
	if err := e.c.Get(ctx, podKey("b"), storage.GetOptions{}, &corev1.Pod{}); err != nil {
		t.Fatal(err)
	}
	after, _ := item.Get()
	if after == before {
		t.Error("the updated entry's shared object was kept")
	}
	if got := after.GetObject().(*corev1.Pod).Labels["app"]; got != "changed" {
		t.Errorf("updated object has app=%q", got)
	}

	ctx, item = cacheable.WithItem(e.ctx)
	err := e.c.Get(ctx, podKey("missing"), storage.GetOptions{}, &corev1.Pod{})
	if !storage.IsNotFound(err) {
		t.Errorf("missing: err %v, want not found", err)
	}
	if _, ok := item.Get(); ok {
		t.Error("missing: an object was handed out")
	}
}

// TestGetItemMakesObjectsOnlyWhenFilled: GetItem makes the object it
// fills only when it does not hand the entry to the context's Item: none
// (and a nil result) for an entry served from the cache with an Item,
// one (the filled object) without an Item and for a missing key with
// IgnoreNotFound, none for a missing key without it.
func TestGetItemMakesObjectsOnlyWhenFilled(t *testing.T) {
	e := newPodEnv(t, envOptions{})
	e.create("a", nil)
	e.waitRevision(e.b.Revision())
	made := 0
	newPod := func() runtime.Object { made++; return &corev1.Pod{} }

	for _, rv := range []string{"", "0"} {
		made = 0
		ctx, item := cacheable.WithItem(e.ctx)
		obj, err := e.c.GetItem(ctx, podKey("a"), storage.GetOptions{ResourceVersion: rv}, newPod)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := item.Get(); !ok {
			t.Fatalf("rv %q: entry not handed out", rv)
		}
		if obj != nil || made != 0 {
			t.Errorf("rv %q: with the Item filled, got %v and %d objects made, want nil and none", rv, obj, made)
		}

		made = 0
		obj, err = e.c.GetItem(e.ctx, podKey("a"), storage.GetOptions{ResourceVersion: rv}, newPod)
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := obj.(*corev1.Pod); !ok || p.Name != "a" || made != 1 {
			t.Errorf("rv %q: without an Item, got %#v and %d objects made, want pod a and one", rv, obj, made)
		}
	}

	made = 0
	ctx, item := cacheable.WithItem(e.ctx)
	obj, err := e.c.GetItem(ctx, podKey("missing"), storage.GetOptions{IgnoreNotFound: true}, newPod)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := obj.(*corev1.Pod); !ok || p.Name != "" || made != 1 {
		t.Errorf("missing, IgnoreNotFound: got %#v and %d objects made, want an empty pod and one", obj, made)
	}
	if _, ok := item.Get(); ok {
		t.Error("missing: an object was handed out")
	}
	made = 0
	_, err = e.c.GetItem(ctx, podKey("missing"), storage.GetOptions{}, newPod)
	if !storage.IsNotFound(err) || made != 0 {
		t.Errorf("missing: err %v and %d objects made, want not found and none", err, made)
	}
}
