package cacher

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// crJSON is a custom resource as etcd holds it (the shape of kapi-bench's
// objects after an update), with n, the generation and a label varying.
func crJSON(n int, label string) string {
	return fmt.Sprintf(`{"apiVersion":"bench.kapi.dev/v1","kind":"BenchThing","metadata":{`+
		`"creationTimestamp":"2026-11-26T13:44:02Z","generation":%d,"labels":{"l":%q},"managedFields":[{"apiVersion":"bench.kapi.dev/v1",`+
		`"fieldsType":"FieldsV1","fieldsV1":{"f:spec":{".":{},"f:n":{},"f:tags":{},"f:text":{}}},"manager":"kapi-bench",`+
		`"operation":"Update","time":"2026-11-26T13:44:02Z"}],"name":"t00001","namespace":"bench",`+
		`"uid":"8c2f7d8e-5b7e-4b52-9d38-3f7bbae1c001"},"spec":{"n":%d,"ratio":0.5,"on":true,"none":null,"tags":["a","b","c"],`+
		`"text":"a custom resource of a few hundred bytes, as a small controller's objects are; padding padding padding"}}`,
		n+1, label, n)
}

func decodeCR(t testing.TB, s string) *unstructured.Unstructured {
	t.Helper()
	obj, err := kruntime.Decode(unstructured.UnstructuredJSONScheme, []byte(s))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return obj.(*unstructured.Unstructured)
}

func crEntry(t testing.TB, s string) *entry {
	t.Helper()
	u := decodeCR(t, s)
	return newCacheEntry("/benchthings/bench/"+u.GetName(), u, 0, labels.Set(u.GetLabels()),
		fields.Set{"metadata.name": u.GetName(), "metadata.namespace": u.GetNamespace()})
}

func sameMap(a, b any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func sameString(a, b string) bool {
	return len(a) > 0 && len(a) == len(b) && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TestShareUnchanged: the new state keeps its content, reuses prev's equal
// subtrees, strings, key and attribute sets, and prev is not changed.
func TestShareUnchanged(t *testing.T) {
	prev, cur := crEntry(t, crJSON(1, "x")), crEntry(t, crJSON(2, "x"))
	want, prevWant := cur.object().DeepCopyObject(), prev.object().DeepCopyObject()
	shareUnchanged(cur, prev)

	if !equality.Semantic.DeepEqual(cur.object(), want) {
		t.Fatalf("shared state changed:\n got %v\nwant %v", cur.object(), want)
	}
	if !equality.Semantic.DeepEqual(prev.object(), prevWant) {
		t.Fatalf("previous state changed:\n got %v\nwant %v", prev.object(), prevWant)
	}
	c, p := cur.object().(*unstructured.Unstructured).Object, prev.object().(*unstructured.Unstructured).Object
	cm, pm := c["metadata"].(map[string]any), p["metadata"].(map[string]any)
	cs, ps := c["spec"].(map[string]any), p["spec"].(map[string]any)
	for name, pair := range map[string][2]any{
		"metadata.managedFields": {cm["managedFields"], pm["managedFields"]},
		"metadata.labels":        {cm["labels"], pm["labels"]},
		"spec.tags":              {cs["tags"], ps["tags"]},
	} {
		if !sameMap(pair[0], pair[1]) {
			t.Errorf("%s: not shared with the previous state", name)
		}
	}
	for name, pair := range map[string][2]any{"the object": {c, p}, "metadata": {cm, pm}, "spec": {cs, ps}} {
		if sameMap(pair[0], pair[1]) {
			t.Errorf("%s differs from the previous state but is shared with it", name)
		}
	}
	if !sameString(cs["text"].(string), ps["text"].(string)) || !sameString(cm["uid"].(string), pm["uid"].(string)) {
		t.Errorf("equal strings in changed maps are not shared")
	}
	if !sameString(cur.key, prev.key) || !sameMap(map[string]string(cur.labels), map[string]string(prev.labels)) ||
		!sameMap(map[string]string(cur.fields), map[string]string(prev.fields)) {
		t.Errorf("key, labels or fields not shared with the previous entry")
	}

	// A changed label set stays the new state's own.
	prev2, cur2 := crEntry(t, crJSON(1, "x")), crEntry(t, crJSON(1, "y"))
	shareUnchanged(cur2, prev2)
	if cur2.labels.Get("l") != "y" || sameMap(map[string]string(cur2.labels), map[string]string(prev2.labels)) {
		t.Errorf("changed labels: got %v, shared %v", cur2.labels, sameMap(map[string]string(cur2.labels), map[string]string(prev2.labels)))
	}
}

// TestShareValueShapes: values of different types, lengths or keys are
// never taken for equal; equal ones are.
func TestShareValueShapes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		a, b  any
		equal bool
	}{
		{"equal scalars", int64(1), int64(1), true},
		{"int and float", int64(1), float64(1), false},
		{"nil and map", nil, map[string]any{}, false},
		{"scalar and map", int64(1), map[string]any{"a": int64(1)}, false},
		{"map and scalar", map[string]any{"a": int64(1)}, int64(1), false},
		{"string and list", "a", []any{"a"}, false},
		{"shorter list", []any{"a"}, []any{"a", "b"}, false},
		{"longer list", []any{"a", "b"}, []any{"a"}, false},
		{"extra key", map[string]any{"a": "x", "b": "y"}, map[string]any{"a": "x"}, false},
		{"missing key", map[string]any{"a": "x"}, map[string]any{"a": "x", "b": "y"}, false},
		{"other key", map[string]any{"a": "x"}, map[string]any{"b": "x"}, false},
		{"nested change", map[string]any{"a": []any{map[string]any{"b": true}}}, map[string]any{"a": []any{map[string]any{"b": false}}}, false},
		{"nested equal", map[string]any{"a": []any{map[string]any{"b": true}, nil}}, map[string]any{"a": []any{map[string]any{"b": true}, nil}}, true},
		{"other types", int32(1), int32(1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := kruntime.DeepCopyJSONValue(normalize(tc.a))
			got, equal := shareValue(tc.a, tc.b)
			if equal != tc.equal {
				t.Fatalf("equal: got %v, want %v", equal, tc.equal)
			}
			if !reflect.DeepEqual(normalize(got), want) {
				t.Fatalf("value changed: got %#v, want %#v", got, want)
			}
		})
	}
}

// normalize makes values DeepCopyJSONValue accepts (it panics on int32).
func normalize(v any) any {
	if i, ok := v.(int32); ok {
		return int64(i)
	}
	return v
}

// TestWindowSharesStates: through the cache, every event replayed from the
// window still carries the state written, and successive states of a
// custom resource share their unchanged parts.
func TestWindowSharesStates(t *testing.T) {
	b := memory.NewBackend(memory.BackendConfig{Logger: quietLogger(), CompactionInterval: -1})
	t.Cleanup(func() { _ = b.Close() })
	newCR := func() kruntime.Object { return &unstructured.Unstructured{} }
	newList := func() kruntime.Object { return &unstructured.UnstructuredList{} }
	under := b.Store(memory.Config{Codec: unstructured.UnstructuredJSONScheme, NewFunc: newCR, NewListFunc: newList})
	c, err := New(Config{Storage: under, ResourcePrefix: "/benchthings", NewFunc: newCR, NewListFunc: newList, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	ctx := context.Background()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	const key, versions = "/benchthings/bench/t00001", 5
	var written []*unstructured.Unstructured
	out := &unstructured.Unstructured{}
	if err := c.Create(ctx, key, decodeCR(t, crJSON(0, "x")), out); err != nil {
		t.Fatalf("create: %v", err)
	}
	written = append(written, out)
	for n := 1; n < versions; n++ {
		out = &unstructured.Unstructured{}
		err := c.GuaranteedUpdate(ctx, key, out, false, nil, func(in kruntime.Object) (kruntime.Object, error) {
			u := decodeCR(t, crJSON(n, "x"))
			u.SetResourceVersion(in.(*unstructured.Unstructured).GetResourceVersion())
			return u, nil
		}, nil)
		if err != nil {
			t.Fatalf("update %d: %v", n, err)
		}
		written = append(written, out)
	}

	w, err := c.Watch(ctx, "/benchthings", storage.ListOptions{ResourceVersion: "1", Recursive: true})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	var got []*unstructured.Unstructured
	for len(got) < versions-1 {
		select {
		case ev := <-w.ResultChan():
			if ev.Type != watch.Modified {
				t.Fatalf("event %d: %s, want MODIFIED", len(got), ev.Type)
			}
			got = append(got, ev.Object.(*unstructured.Unstructured))
		case <-time.After(waitTimeout):
			t.Fatalf("got %d events, want %d", len(got), versions-1)
		}
	}
	for i, u := range got {
		if !equality.Semantic.DeepEqual(u.Object, written[i+1].Object) {
			t.Fatalf("event %d:\n got %v\nwant %v", i, u.Object, written[i+1].Object)
		}
		if i > 0 {
			prevMF, curMF := got[i-1].Object["metadata"].(map[string]any)["managedFields"], u.Object["metadata"].(map[string]any)["managedFields"]
			if !sameMap(prevMF, curMF) {
				t.Errorf("event %d: managedFields equal to the state before but not shared", i)
			}
		}
	}
}

// BenchmarkWindowStatesTyped is BenchmarkWindowStates for a built-in
// object: a pod whose status changes, decoded as the cache gets it from
// the store under it.
func BenchmarkWindowStatesTyped(b *testing.B) {
	const states = 4096
	codec := storagetest.Codec()
	docs := make([][]byte, states)
	for i := range docs {
		p := testPod(corev1.PodRunning, "x")
		p.ResourceVersion = strconv.Itoa(i + 1)
		p.Status.Conditions[0].LastProbeTime = metav1.Date(2026, 11, 26, 13, 0, i, 0, time.UTC)
		data, err := kruntime.Encode(codec, p)
		if err != nil {
			b.Fatal(err)
		}
		docs[i] = data
	}
	for _, share := range []bool{false, true} {
		b.Run(fmt.Sprintf("share=%v", share), func(b *testing.B) {
			var retained float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				window := make([]*entry, states)
				for i, d := range docs {
					obj, _, err := codec.Decode(d, nil, &corev1.Pod{})
					if err != nil {
						b.Fatal(err)
					}
					window[i] = newCacheEntry("/pods/ns/p", obj, 0, nil, nil)
					if share && i > 0 {
						shareUnchanged(window[i], window[i-1])
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				retained = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / states
				runtime.KeepAlive(window)
			}
			b.ReportMetric(retained, "retained-B/state")
		})
	}
}

// BenchmarkWindowStates: the heap a window of successive states of one
// small custom resource holds per state, decoded as the cache gets them,
// with and without sharing (retained-B/state after a GC).
func BenchmarkWindowStates(b *testing.B) {
	const states = 4096
	docs := make([]string, states)
	for i := range docs {
		docs[i] = crJSON(i, "x")
	}
	for _, share := range []bool{false, true} {
		b.Run(fmt.Sprintf("share=%v", share), func(b *testing.B) {
			var retained float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				window := make([]*entry, states)
				for i, d := range docs {
					window[i] = crEntry(b, d)
					if share && i > 0 {
						shareUnchanged(window[i], window[i-1])
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				retained = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / states
				runtime.KeepAlive(window)
			}
			b.ReportMetric(retained, "retained-B/state")
		})
	}
}

func testPod(phase corev1.PodPhase, label string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "8c2f7d8e-5b7e-4b52-9d38-3f7bbae1c001",
			Labels: map[string]string{"app": label}, Annotations: map[string]string{"a": "b"},
			CreationTimestamp: metav1.Date(2026, 11, 26, 13, 0, 0, 0, time.UTC)},
		Spec: corev1.PodSpec{
			NodeName: "node-1",
			Containers: []corev1.Container{{Name: "c", Image: "registry.example/app:v1", Args: []string{"--x", "--y"},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}},
		},
		Status: corev1.PodStatus{Phase: phase, PodIP: "10.0.0.1",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
}

// TestShareUnchangedTyped: a built-in object's new state keeps its content,
// shares equal strings, slices, maps and structs with the state before,
// and the state before is not changed.
func TestShareUnchangedTyped(t *testing.T) {
	prevPod, curPod := testPod(corev1.PodPending, "x"), testPod(corev1.PodRunning, "y")
	prev, cur := newCacheEntry("/pods/ns/p", prevPod, 0, nil, nil), newCacheEntry("/pods/ns/p", curPod, 0, nil, nil)
	want, prevWant := curPod.DeepCopy(), prevPod.DeepCopy()
	shareUnchanged(cur, prev)
	if !equality.Semantic.DeepEqual(curPod, want) || !reflect.DeepEqual(curPod, want) {
		t.Fatalf("shared state changed:\n got %+v\nwant %+v", curPod, want)
	}
	if !reflect.DeepEqual(prevPod, prevWant) {
		t.Fatalf("previous state changed:\n got %+v\nwant %+v", prevPod, prevWant)
	}
	if !sameMap(curPod.Spec.Containers, prevPod.Spec.Containers) || !sameMap(curPod.Annotations, prevPod.Annotations) ||
		!sameMap(curPod.Status.Conditions, prevPod.Status.Conditions) {
		t.Errorf("equal containers, annotations or conditions not shared")
	}
	if sameMap(curPod.Labels, prevPod.Labels) {
		t.Errorf("changed labels shared with the state before")
	}
	if !sameString(curPod.Spec.NodeName, prevPod.Spec.NodeName) || !sameString(string(curPod.UID), string(prevPod.UID)) {
		t.Errorf("equal strings not shared")
	}
	// Objects of another type, or not pointers to structs, are left alone.
	other := newCacheEntry("", &corev1.ConfigMap{}, 0, nil, nil)
	shareUnchanged(other, prev)
	shareUnchanged(prev, other)
}

// BenchmarkShareUnchanged: the cost of sharing one new state with the
// state before (the decode is not timed).
func BenchmarkShareUnchanged(b *testing.B) {
	codec := storagetest.Codec()
	podData := func(i int) []byte {
		p := testPod(corev1.PodRunning, "x")
		p.ResourceVersion = strconv.Itoa(i + 1)
		data, err := kruntime.Encode(codec, p)
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	for _, kind := range []string{"pod", "custom resource"} {
		b.Run(kind, func(b *testing.B) {
			decode := func(i int) *entry {
				if kind == "pod" {
					obj, _, err := codec.Decode(podData(i), nil, &corev1.Pod{})
					if err != nil {
						b.Fatal(err)
					}
					return newCacheEntry("/pods/ns/p", obj, 0, nil, nil)
				}
				return crEntry(b, crJSON(i, "x"))
			}
			prev := decode(0)
			curs := make([]*entry, b.N)
			for i := range curs {
				curs[i] = decode(i + 1)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				shareUnchanged(curs[i], prev)
			}
		})
	}
}

// leafWithInterface is compared whole (an unexported field) and holds an
// interface: == on it could panic, DeepEqual cannot.
type leafWithInterface struct {
	X any
	y int
}

type withLeaves struct {
	L    leafWithInterface
	Arr  [2]any
	Name string
}

// TestShareReflectLeaves: leaves holding uncomparable values are compared
// without panicking, and equal leaves are shared while changed ones are not.
func TestShareReflectLeaves(t *testing.T) {
	a := &withLeaves{L: leafWithInterface{X: map[string]int{"a": 1}, y: 1}, Arr: [2]any{[]int{1}, "x"}, Name: "n"}
	b := &withLeaves{L: leafWithInterface{X: map[string]int{"a": 1}, y: 1}, Arr: [2]any{[]int{1}, "x"}, Name: "n"}
	if !shareReflect(reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()) {
		t.Fatalf("equal values reported unequal")
	}
	c := &withLeaves{L: leafWithInterface{X: map[string]int{"a": 2}, y: 1}, Arr: [2]any{[]int{1}, "x"}, Name: "n"}
	if shareReflect(reflect.ValueOf(c).Elem(), reflect.ValueOf(b).Elem()) {
		t.Fatalf("different values reported equal")
	}
	if got := c.L.X.(map[string]int)["a"]; got != 2 {
		t.Fatalf("changed leaf overwritten: got %d, want 2", got)
	}
}
