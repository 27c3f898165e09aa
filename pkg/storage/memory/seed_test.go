package memory

import (
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// countingCodec counts the decodings of its codec.
type countingCodec struct {
	runtime.Codec
	n *atomic.Int32
}

func (c countingCodec) Decode(data []byte, d *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	c.n.Add(1)
	return c.Codec.Decode(data, d, into)
}

// A watcher taking private objects gets, for a create or an update, a copy
// of what the writer decoded rather than a decoding of its own: the same
// object as a decoding of the stored value (with the write's revision),
// not shared with the writer's result nor with another watcher.
func TestWatchersCopyTheWritersDecoding(t *testing.T) {
	var decodes atomic.Int32
	b := newTestBackend(t, testConfig())
	r := storagetest.PodResource(storagetest.Codec())
	s := b.Store(Config{Codec: countingCodec{r.Codec, &decodes}, NewFunc: r.NewFunc, NewListFunc: r.NewListFunc})
	var ws [2]watch.Interface
	for i := range ws {
		w, err := s.Watch(t.Context(), "/pods", storage.ListOptions{ResourceVersion: "0", Recursive: true})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		ws[i] = w
	}
	const n = 20
	for i := range n {
		key := fmt.Sprintf("/pods/ns/p%d", i)
		out := &corev1.Pod{}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("p", i), Labels: map[string]string{"a": "b"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Args: []string{}}}}}
		if err := s.Create(t.Context(), key, pod, out); err != nil {
			t.Fatal(err)
		}
		upd := &corev1.Pod{}
		if err := s.GuaranteedUpdate(t.Context(), key, upd, false, nil, func(in runtime.Object) (runtime.Object, error) {
			p := in.(*corev1.Pod)
			p.Labels["c"] = "d"
			return p, nil
		}, nil); err != nil {
			t.Fatal(err)
		}
		for j, want := range []*corev1.Pod{out, upd} {
			var got [2]*corev1.Pod
			for k, w := range ws {
				select {
				case ev := <-w.ResultChan():
					got[k] = ev.Object.(*corev1.Pod)
				case <-time.After(10 * time.Second):
					t.Fatalf("watcher %d: no event %d of %s", k, j, key)
				}
			}
			fresh := &corev1.Pod{}
			data, _, err := b.Read(key)
			if err != nil {
				t.Fatal(err)
			}
			if j == 1 { // the key's current value: the update's
				if err := s.decode(key, data[key], fresh, mustRV(t, upd)); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(fresh, got[0]) {
					t.Errorf("%s: watcher's object\n%#v\nis not the stored value's decoding\n%#v", key, got[0], fresh)
				}
			}
			if !reflect.DeepEqual(want, got[0]) || !reflect.DeepEqual(want, got[1]) {
				t.Errorf("%s event %d: watchers' objects differ from the writer's", key, j)
			}
			if got[0] == want || got[0] == got[1] || &got[0].Labels == &got[1].Labels {
				t.Fatalf("%s event %d: watchers share an object", key, j)
			}
			got[0].Labels["x"] = "y" // a watcher's object is its own
			if _, ok := got[1].Labels["x"]; ok {
				t.Fatalf("%s event %d: watchers share the labels", key, j)
			}
			if _, ok := want.Labels["x"]; ok {
				t.Fatalf("%s event %d: a watcher shares the writer's labels", key, j)
			}
		}
	}
	// Per key: the create's decoding, the update's read and its decoding,
	// and the check above (4), and none by the watchers (4 more without
	// the writer's seed). A watcher still decodes when it takes the event
	// before the writer seeded it (it was awake, delivering the previous
	// one) or after the seed was collected (it is held weakly): allow a
	// few.
	if got := int(decodes.Load()); got > 5*n {
		t.Errorf("%d decodings for %d creates and updates with two watchers, want at most %d", got, n, 5*n)
	}
}

func mustRV(t *testing.T, obj runtime.Object) uint64 {
	t.Helper()
	rv, err := storage.ObjectResourceVersion(obj)
	if err != nil {
		t.Fatal(err)
	}
	return rv
}

// A writer seeds only for watchers of its own Store: watchers of another
// Store over the same keys (another served version of custom resources)
// decode with that Store, and the event's shared decodings stay theirs
// to claim.
func TestSeedOnlyForTheWritersStore(t *testing.T) {
	b := newTestBackend(t, testConfig())
	r := storagetest.PodResource(storagetest.Codec())
	s1 := b.Store(Config{Codec: r.Codec, NewFunc: r.NewFunc, NewListFunc: r.NewListFunc})
	s2 := b.Store(Config{Codec: r.Codec, NewFunc: r.NewFunc, NewListFunc: r.NewListFunc})
	w, err := s2.Watch(t.Context(), "/pods", storage.ListOptions{ResourceVersion: "0", Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	if err := s1.Create(t.Context(), "/pods/ns/p", pod, &corev1.Pod{}); err != nil {
		t.Fatal(err)
	}
	b.mu.RLock()
	ev := b.events[len(b.events)-1]
	b.mu.RUnlock()
	if v := ev.decoded.view.Load(); v != nil && v.store == s1 {
		t.Error("the writer's Store claimed the event's decodings with no watcher of its own")
	}
	select {
	case ev := <-w.ResultChan():
		if ev.Type != watch.Added {
			t.Errorf("event %s, want ADDED", ev.Type)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
}
