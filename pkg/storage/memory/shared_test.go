package memory

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// TestSharedEventObjects: watches whose context asks for shared objects get
// one cacheable.Object per event (decoded once for all of them), a
// selector's watcher matches against it and gets the shared previous state
// when the object leaves its selector, plain watches still get their own
// objects, and a watch replaying the history after the shared objects were
// collected gets equal objects again.
func TestSharedEventObjects(t *testing.T) {
	b := newTestBackend(t, testConfig())
	r := storagetest.PodResource(storagetest.Codec())
	s := b.Store(Config{Codec: r.Codec, NewFunc: r.NewFunc, NewListFunc: r.NewListFunc})
	ctx := t.Context()
	shared := cacheable.WithObjects(ctx)
	start := createPods(t, s, "ns", 1)[0]
	rv := storage.ListOptions{ResourceVersion: strconv.FormatUint(start, 10), Recursive: true}
	sel, err := labels.Parse("k=v")
	if err != nil {
		t.Fatal(err)
	}
	selRV := rv
	selRV.Predicate = storage.SelectionPredicate{Label: sel, GetAttrs: storagetest.PodAttrs}
	watchWith := func(ctx context.Context, opts storage.ListOptions) watch.Interface {
		t.Helper()
		w, err := s.Watch(ctx, "/pods", opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		return w
	}
	s1, s2, plain, selective := watchWith(shared, rv), watchWith(shared, rv), watchWith(ctx, rv), watchWith(shared, selRV)

	create := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", Labels: map[string]string{"k": "v"}}}
	out := &corev1.Pod{}
	if err := s.Create(ctx, "/pods/ns/a", create, out); err != nil {
		t.Fatal(err)
	}
	e1, e2, e3, e4 := next(t, s1), next(t, s2), next(t, plain), next(t, selective)
	c1, ok := e1.Object.(*cacheable.Object)
	if !ok || e2.Object != e1.Object || e4.Object != e1.Object || e4.Type != watch.Added {
		t.Fatalf("shared watchers got %T %p, %p, %p (%s); want one *cacheable.Object, ADDED", e1.Object, e1.Object, e2.Object, e4.Object, e4.Type)
	}
	if got := c1.GetObject().(*corev1.Pod); got.Name != "a" || got.ResourceVersion != out.ResourceVersion {
		t.Fatalf("shared object holds %s@%s, want a@%s", got.Name, got.ResourceVersion, out.ResourceVersion)
	}
	if got, ok := e3.Object.(*corev1.Pod); !ok || got.Name != "a" || got == c1.GetObject() {
		t.Fatalf("plain watcher got %T, want its own *Pod", e3.Object)
	}

	// The object leaves the selector: MODIFIED for the others, DELETED
	// with the shared previous state (at the event's revision) for the
	// selective watcher.
	var moved corev1.Pod
	if err := s.GuaranteedUpdate(ctx, "/pods/ns/a", &moved, false, nil, func(in k8sruntime.Object) (k8sruntime.Object, error) {
		p := in.(*corev1.Pod).DeepCopy()
		p.Labels = map[string]string{"k": "w"}
		return p, nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	for _, w := range []watch.Interface{s1, s2, plain} {
		if ev := next(t, w); ev.Type != watch.Modified {
			t.Fatalf("got %s, want MODIFIED", ev.Type)
		}
	}
	leave := next(t, selective)
	lo, ok := leave.Object.(*cacheable.Object)
	if leave.Type != watch.Deleted || !ok {
		t.Fatalf("selective watcher got %s %T, want DELETED with a shared object", leave.Type, leave.Object)
	}
	if p := lo.GetObject().(*corev1.Pod); p.Labels["k"] != "v" || p.ResourceVersion != moved.ResourceVersion {
		t.Fatalf("leave object: labels %v at %s, want the previous labels at %s", p.Labels, p.ResourceVersion, moved.ResourceVersion)
	}

	// Once delivered, the history does not keep the decoded objects: a
	// replay decodes again, equal content, a new shared object.
	e1, e2, e4, leave = watch.Event{}, watch.Event{}, watch.Event{}, watch.Event{}
	c1, lo = nil, nil
	runtime.GC()
	replay := watchWith(shared, rv)
	if ev := next(t, replay); ev.Type != watch.Added || ev.Object.(*cacheable.Object).GetObject().(*corev1.Pod).ResourceVersion != out.ResourceVersion {
		t.Fatalf("replay: got %s %v", ev.Type, ev.Object)
	}
	if ev := next(t, replay); ev.Type != watch.Modified || ev.Object.(*cacheable.Object).GetObject().(*corev1.Pod).Labels["k"] != "w" {
		t.Fatalf("replay: got %s %v", ev.Type, ev.Object)
	}
}

func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return watch.Event{}
}
