package cacher

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
	"time"
	"weak"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// randomTree is a tree of the values a decoded custom resource holds.
func randomTree(r *rand.Rand, depth int) any {
	k := r.IntN(10)
	if depth > 4 && k >= 8 {
		k = r.IntN(8)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return int64(r.Uint64())
	case 3:
		return []float64{1.0, -0.0, 0.5, math.MaxFloat64, math.Inf(-1), math.SmallestNonzeroFloat64, r.NormFloat64()}[r.IntN(7)]
	case 4, 5:
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256)) // any bytes, invalid UTF-8 included
		}
		return string(b)
	case 6, 7:
		if r.IntN(4) == 0 {
			return "plain"
		}
		return int64(r.IntN(100))
	case 8:
		l := make([]any, r.IntN(5))
		for i := range l {
			l[i] = randomTree(r, depth+1)
		}
		return l
	}
	m := make(map[string]any, 5)
	for range r.IntN(6) {
		m[fmt.Sprintf("k%d", r.IntN(20))] = randomTree(r, depth+1)
	}
	return m
}

// TestPackRoundTrip: unpacking gives back the packed tree exactly, value
// for value and type for type (reflect.DeepEqual: an int64 stays an int64,
// a float64 1.0 a float64, an empty map or list empty and not nil).
func TestPackRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		obj := map[string]any{"apiVersion": "x/v1", "kind": "X", "tree": randomTree(r, 0), "empty": map[string]any{}, "none": []any{}}
		data, err := packUnstructured(&unstructured.Unstructured{Object: obj})
		if err != nil {
			t.Fatalf("tree %d: pack: %v", i, err)
		}
		u, err := unpackUnstructured(data)
		if err != nil {
			t.Fatalf("tree %d: unpack: %v", i, err)
		}
		if !reflect.DeepEqual(u.Object, obj) {
			t.Fatalf("tree %d:\n got %#v\nwant %#v", i, u.Object, obj)
		}
		again, err := packUnstructured(u)
		if err != nil || string(again) != string(data) {
			t.Fatalf("tree %d: packing is not deterministic (err %v)", i, err)
		}
		// Every truncation is an error, never a panic or a partial tree.
		for n := range len(data) {
			if _, err := unpackUnstructured(data[:n]); err == nil {
				t.Fatalf("tree %d: %d of %d bytes unpacked without an error", i, n, len(data))
			}
		}
	}
}

// TestPackRefusesInexactTrees: values the packed form could not give back
// with their type are refused (the object then stays decoded).
func TestPackRefusesInexactTrees(t *testing.T) {
	for name, v := range map[string]any{
		"int":            1,
		"int32":          int32(1),
		"float32":        float32(1),
		"typed nil map":  map[string]any(nil),
		"typed nil list": []any(nil),
		"string list":    []string{"a"},
		"nested int":     map[string]any{"a": []any{map[string]any{"b": 2}}},
	} {
		_, err := packUnstructured(&unstructured.Unstructured{Object: map[string]any{"v": v}})
		if !errors.Is(err, errUnpackable) {
			t.Errorf("%s: err %v, want errUnpackable", name, err)
		}
	}
}

// TestWindowPacksSupersededStates: once more than packLag events follow
// them, the window keeps superseded states of custom resources packed (as
// deltas), never the current ones; a watch resumed from the start of the
// window, with or without a selector, gets the same events as the same
// watch on the store under the cache (the objects equal type for type,
// the DELETED of an object leaving a selector included).
func TestWindowPacksSupersededStates(t *testing.T) {
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
	keyOf := func(i int) string { return fmt.Sprintf("/benchthings/bench/t%05d", i) }
	cr := func(i, n int) *unstructured.Unstructured {
		u := decodeCR(t, crJSON(n, []string{"x", "y"}[n/3%2]))
		u.SetName(fmt.Sprintf("t%05d", i))
		return u
	}
	const keys = 7
	start := uint64(0)
	for i := range keys {
		out := &unstructured.Unstructured{}
		if err := c.Create(ctx, keyOf(i), cr(i, 0), out); err != nil {
			t.Fatalf("create: %v", err)
		}
		if start == 0 {
			start = rvOf(t, out)
		}
	}
	writes := packLag + 400
	for n := 1; n <= writes; n++ {
		i := n % keys
		if n%97 == 0 { // a deletion and a re-creation: the key's anchor is dropped, then a new one made
			if err := c.Delete(ctx, keyOf(i), &unstructured.Unstructured{}, nil, nil, nil); err != nil {
				t.Fatalf("delete: %v", err)
			}
			if err := c.Create(ctx, keyOf(i), cr(i, n), &unstructured.Unstructured{}); err != nil {
				t.Fatalf("re-create: %v", err)
			}
			continue
		}
		err := c.GuaranteedUpdate(ctx, keyOf(i), &unstructured.Unstructured{}, false, nil, func(in kruntime.Object) (kruntime.Object, error) {
			u := cr(i, n)
			u.SetResourceVersion(in.(*unstructured.Unstructured).GetResourceVersion())
			return u, nil
		}, nil)
		if err != nil {
			t.Fatalf("update %d: %v", n, err)
		}
	}
	last, err := under.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waitCacheRevision(t, c, last)

	// The cache's states: the current ones decoded, most superseded ones
	// of the window's older part packed, nearly all as deltas.
	c.mu.RLock()
	current := map[*entry]bool{}
	for _, e := range c.objects.items {
		current[e] = true
		if e.body.Load().packed != nil {
			t.Errorf("current state of %s packed", e.key)
		}
	}
	packed, deltas := 0, 0
	for i := range c.events.n {
		ev := c.events.at(i)
		for _, e := range []*entry{ev.cur, ev.prev} {
			if e == nil || current[e] {
				continue
			}
			if p := e.body.Load().packed; p != nil {
				packed++
				if p.base != nil {
					deltas++
				}
			}
		}
	}
	c.mu.RUnlock()
	if packed < writes-packLag-keys {
		t.Errorf("%d packed states, want at least %d", packed, writes-packLag-keys)
	}
	if deltas < packed*3/4 {
		t.Errorf("%d of %d packed states are deltas", deltas, packed)
	}

	// Drop every unpacked object still held (the weak references of the
	// packed states), so the watches below unpack.
	runtime.GC()

	events := writes + writes/97
	for _, sel := range []labels.Selector{nil, labels.SelectorFromSet(labels.Set{"l": "x"})} {
		opts := storage.ListOptions{ResourceVersion: fmt.Sprint(start), Recursive: true, Predicate: storage.SelectionPredicate{Label: sel}}
		want := collectUntil(t, under, opts, events, last)
		got := collectUntil(t, c, opts, events, last)
		if len(got) != len(want) {
			t.Fatalf("selector %v: %d events from the cache, %d from the store", sel, len(got), len(want))
		}
		for i := range want {
			if got[i].Type != want[i].Type || !reflect.DeepEqual(got[i].Object.(*unstructured.Unstructured).Object, want[i].Object.(*unstructured.Unstructured).Object) {
				t.Fatalf("selector %v, event %d:\n got %s %v\nwant %s %v", sel, i, got[i].Type, got[i].Object, want[i].Type, want[i].Object)
			}
		}
	}
}

// collectUntil reads the events of a watch of s with opts until one of revision
// last (or max events).
func collectUntil(t *testing.T, s storage.Interface, opts storage.ListOptions, max int, last uint64) []watch.Event {
	t.Helper()
	w, err := s.Watch(context.Background(), "/benchthings", opts)
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	var out []watch.Event
	for len(out) < max {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed after %d events", len(out))
			}
			if ev.Type == watch.Bookmark {
				continue
			}
			out = append(out, ev)
			if rvOf(t, ev.Object) >= last {
				return out
			}
		case <-time.After(waitTimeout):
			t.Fatalf("%d events, then none for %v", len(out), waitTimeout)
		}
	}
	return out
}

// waitCacheRevision waits for the cache to reach rev.
func waitCacheRevision(t *testing.T, c *Cacher, rev uint64) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for c.Revision() < rev {
		if time.Now().After(deadline) {
			t.Fatalf("cache at %d, want %d", c.Revision(), rev)
		}
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkPack: packing one superseded state of a small custom resource
// as a delta (what the reflector does per event past packLag), and
// unpacking it (what a watcher replaying the window does per old state).
func BenchmarkPack(b *testing.B) {
	const states = 64
	c := &Cacher{}
	entries := make([]*entry, states)
	for i := range entries {
		entries[i] = crEntry(b, crJSON(i, "x"))
	}
	b.Run("pack", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			e := entries[i%states]
			e.body.Store(&entryBody{obj: e.object()})
			c.pack(e)
		}
	})
	b.Run("unpack", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			p := entries[i%states].body.Load().packed
			p.last = weak.Pointer[unstructured.Unstructured]{}
			_ = p.object("k")
		}
	})
}
