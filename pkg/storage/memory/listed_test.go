package memory

import (
	"context"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// listShared lists key with shared items (as the API handler asks) and
// returns them and the list.
func listShared(t *testing.T, s *Store, opts storage.ListOptions) ([]*cacheable.Object, *corev1.PodList) {
	t.Helper()
	ctx, sink := cacheable.WithItems(t.Context())
	list := &corev1.PodList{}
	if err := s.GetList(ctx, "/pods", opts, list); err != nil {
		t.Fatal(err)
	}
	objs, ok := sink.Get()
	if !ok {
		t.Fatal("the memory store did not hand out shared items")
	}
	if len(list.Items) != 0 {
		t.Fatalf("list with shared items holds %d items too", len(list.Items))
	}
	return objs, list
}

func podOf(t *testing.T, o *cacheable.Object) *corev1.Pod {
	t.Helper()
	p, ok := o.GetObject().(*corev1.Pod)
	if !ok {
		t.Fatalf("shared item holds %T, want *Pod", o.GetObject())
	}
	return p
}

// TestListKeepsDecodedStates: a list decodes each state once; later lists
// of the same states hand out the same shared objects (no decode), a write
// replaces only its key's, plain lists get deep copies of their own, a
// list of another item type decodes its own, and a list at an older
// revision gets the older state without displacing the current one.
func TestListKeepsDecodedStates(t *testing.T) {
	b := newTestBackend(t, testConfig())
	s := podStore(b)
	ctx := t.Context()
	revs := createPods(t, s, "ns", 3)
	all := storage.ListOptions{Recursive: true}

	first, l1 := listShared(t, s, all)
	second, l2 := listShared(t, s, all)
	if len(first) != 3 || len(second) != 3 || l1.ResourceVersion != l2.ResourceVersion || l1.ResourceVersion != strconv.FormatUint(revs[2], 10) {
		t.Fatalf("lists: %d items at %s, %d at %s; want 3 at %d", len(first), l1.ResourceVersion, len(second), l2.ResourceVersion, revs[2])
	}
	for i := range first {
		if first[i] != second[i] {
			t.Fatalf("item %d: second list decoded again (%p, %p)", i, first[i], second[i])
		}
		if p := podOf(t, first[i]); p.ResourceVersion != strconv.FormatUint(revs[i], 10) {
			t.Fatalf("item %d at %s, want %d", i, p.ResourceVersion, revs[i])
		}
	}

	// Plain lists: equal items, deep copies (changing them changes
	// nothing stored or kept).
	plain := &corev1.PodList{}
	if err := s.GetList(ctx, "/pods", all, plain); err != nil {
		t.Fatal(err)
	}
	if len(plain.Items) != 3 || plain.Items[1].Name != "p0001" {
		t.Fatalf("plain list: %+v", plain.Items)
	}
	plain.Items[1].Labels = map[string]string{"changed": "yes"}
	if p := podOf(t, first[1]); p.Labels != nil {
		t.Fatalf("changing a plain list's item changed the kept state: %v", p.Labels)
	}

	// An update replaces its key's state only.
	var updated corev1.Pod
	if err := s.GuaranteedUpdate(ctx, "/pods/ns/p0001", &updated, false, nil, func(in k8sruntime.Object) (k8sruntime.Object, error) {
		p := in.(*corev1.Pod).DeepCopy()
		p.Labels = map[string]string{"k": "v"}
		return p, nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	third, l3 := listShared(t, s, all)
	if l3.ResourceVersion != updated.ResourceVersion {
		t.Fatalf("list at %s, want %s", l3.ResourceVersion, updated.ResourceVersion)
	}
	if third[0] != first[0] || third[2] != first[2] || third[1] == first[1] {
		t.Fatal("after an update of p0001, want p0000 and p0002 kept and p0001 decoded again")
	}
	if p := podOf(t, third[1]); p.ResourceVersion != updated.ResourceVersion || p.Labels["k"] != "v" {
		t.Fatalf("p0001 listed at %s with %v, want %s with k=v", p.ResourceVersion, p.Labels, updated.ResourceVersion)
	}

	// A selector matches against the kept states.
	sel, err := labels.Parse("k=v")
	if err != nil {
		t.Fatal(err)
	}
	selected, _ := listShared(t, s, storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Label: sel, GetAttrs: storagetest.PodAttrs}})
	if len(selected) != 1 || selected[0] != third[1] {
		t.Fatalf("selector k=v listed %d items, want p0001's kept state", len(selected))
	}

	// The state before the update, at its revision: the old object, and
	// the current state's decoding stays.
	old, _ := listShared(t, s, storage.ListOptions{Recursive: true, ResourceVersion: strconv.FormatUint(revs[2], 10), ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if p := podOf(t, old[1]); p.ResourceVersion != strconv.FormatUint(revs[1], 10) || p.Labels != nil {
		t.Fatalf("exact list at %d: p0001 at %s with %v, want %d without labels", revs[2], p.ResourceVersion, p.Labels, revs[1])
	}
	if again, _ := listShared(t, s, all); again[1] != third[1] {
		t.Fatal("a list at an older revision displaced the current state's decoding")
	}

	// A list of another item type (unstructured) decodes its own objects.
	u := &unstructured.UnstructuredList{}
	if err := s.GetList(ctx, "/pods", all, u); err != nil {
		t.Fatal(err)
	}
	if len(u.Items) != 3 || u.Items[1].GetResourceVersion() != updated.ResourceVersion || u.Items[1].GetLabels()["k"] != "v" {
		t.Fatalf("unstructured list: %d items, p0001 %s %v", len(u.Items), u.Items[1].GetResourceVersion(), u.Items[1].GetLabels())
	}
	typed := &corev1.PodList{}
	if err := s.GetList(ctx, "/pods", all, typed); err != nil {
		t.Fatal(err)
	}
	if len(typed.Items) != 3 || typed.Items[1].Labels["k"] != "v" {
		t.Fatalf("typed list after an unstructured one: %+v", typed.Items)
	}

	// A deleted key is not listed; the others' decodings stay.
	var gone corev1.Pod
	if err := s.Delete(ctx, "/pods/ns/p0000", &gone, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	after, _ := listShared(t, s, all)
	if len(after) != 2 || podOf(t, after[0]).Name != "p0001" || podOf(t, after[1]).Name != "p0002" {
		t.Fatalf("after deleting p0000: %d items", len(after))
	}
}

// TestListKeepsDecodedStatesConcurrent: lists racing with updates of the same keys
// always see each key's state at the list's revision (run with -race).
func TestListKeepsDecodedStatesConcurrent(t *testing.T) {
	b := newTestBackend(t, testConfig())
	s := podStore(b)
	createPods(t, s, "ns", 20)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ctx.Err() == nil && i < 300; i++ {
			key := "/pods/ns/p00" + strconv.Itoa(10+i%10)
			var out corev1.Pod
			if err := s.GuaranteedUpdate(ctx, key, &out, false, nil, func(in k8sruntime.Object) (k8sruntime.Object, error) {
				p := in.(*corev1.Pod).DeepCopy()
				p.Annotations = map[string]string{"i": strconv.Itoa(i)}
				return p, nil
			}, nil); err != nil && ctx.Err() == nil {
				t.Error(err)
				return
			}
		}
	})
	for range 4 {
		wg.Go(func() {
			for range 100 {
				objs, list := listShared(t, s, storage.ListOptions{Recursive: true})
				listRV, _ := strconv.ParseUint(list.ResourceVersion, 10, 64)
				if len(objs) != 20 {
					t.Errorf("listed %d pods, want 20", len(objs))
					return
				}
				for _, o := range objs {
					p := podOf(t, o)
					rv, _ := strconv.ParseUint(p.ResourceVersion, 10, 64)
					if rv > listRV {
						t.Errorf("%s at %d in a list at %d", p.Name, rv, listRV)
						return
					}
					// The state as stored at that revision.
					var want corev1.Pod
					exact := &corev1.PodList{}
					if err := s.GetList(ctx, "/pods/ns/"+p.Name, storage.ListOptions{ResourceVersion: list.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact}, exact); err != nil {
						t.Error(err)
						return
					}
					if len(exact.Items) == 1 {
						want = exact.Items[0]
					}
					if want.ResourceVersion != p.ResourceVersion || want.Annotations["i"] != p.Annotations["i"] {
						t.Errorf("%s listed at %s (i=%s), stored at %s (i=%s)", p.Name, p.ResourceVersion, p.Annotations["i"], want.ResourceVersion, want.Annotations["i"])
						return
					}
				}
			}
		})
	}
	wg.Wait()
}
