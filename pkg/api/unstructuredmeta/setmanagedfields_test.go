package unstructuredmeta

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/kapi-dev/kapi/pkg/api/unstructuredmeta/metatest"
)

func fieldsV1(raw string) *metav1.FieldsV1 {
	f := &metav1.FieldsV1{}
	f.SetRawBytes([]byte(raw))
	return f
}

// setFields is the fieldsV1 of a set of paths, as the field manager
// encodes it.
func setFields(t testing.TB, paths ...fieldpath.Path) *metav1.FieldsV1 {
	t.Helper()
	raw, err := fieldpath.NewSet(paths...).ToJSON()
	if err != nil {
		t.Fatal(err)
	}
	return fieldsV1(string(raw))
}

// setManagedFieldsCases are entries to set: what the field manager
// writes, and shapes SetManagedFields converts differently or fails on.
// fast tells whether the direct conversion takes them.
func setManagedFieldsCases(t testing.TB) map[string]struct {
	entries []metav1.ManagedFieldsEntry
	fast    bool
} {
	now := &metav1.Time{Time: time.Date(2026, 11, 28, 1, 2, 3, 400, time.FixedZone("x", 3600))}
	written := metav1.ManagedFieldsEntry{Manager: "kapi-bench", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "bench.kapi.dev/v1",
		Time: now, FieldsType: "FieldsV1", FieldsV1: setFields(t,
			fieldpath.MakePathOrDie("spec", "n"), fieldpath.MakePathOrDie("spec", "tags"),
			fieldpath.MakePathOrDie("metadata", "labels", "a\"b\\c<&>\u2028é"),
			fieldpath.MakePathOrDie("spec", "list", fieldpath.KeyByFields("name", "x\"y", "port", 80)),
			fieldpath.MakePathOrDie("spec", "set", value.NewValueInterface("v<1>")),
			fieldpath.MakePathOrDie("spec", "atomic", 3),
		)}
	with := func(f func(e *metav1.ManagedFieldsEntry)) []metav1.ManagedFieldsEntry {
		e := written
		f(&e)
		return []metav1.ManagedFieldsEntry{e}
	}
	type c = struct {
		entries []metav1.ManagedFieldsEntry
		fast    bool
	}
	cases := map[string]c{
		"written":     {[]metav1.ManagedFieldsEntry{written}, true},
		"nil":         {nil, false},
		"empty":       {[]metav1.ManagedFieldsEntry{}, true},
		"empty entry": {[]metav1.ManagedFieldsEntry{{}}, true},
		"status": {with(func(e *metav1.ManagedFieldsEntry) {
			e.Subresource = "status"
			e.Operation = metav1.ManagedFieldsOperationApply
		}), true},
		"no time":         {with(func(e *metav1.ManagedFieldsEntry) { e.Time = nil }), true},
		"zero time":       {with(func(e *metav1.ManagedFieldsEntry) { e.Time = &metav1.Time{} }), false},
		"no fields":       {with(func(e *metav1.ManagedFieldsEntry) { e.FieldsV1 = nil }), true},
		"empty fields":    {with(func(e *metav1.ManagedFieldsEntry) { e.FieldsV1 = &metav1.FieldsV1{} }), false},
		"fields {}":       {with(func(e *metav1.ManagedFieldsEntry) { e.FieldsV1 = fieldsV1("{}") }), true},
		"fields null":     {with(func(e *metav1.ManagedFieldsEntry) { e.FieldsV1 = fieldsV1("null") }), false},
		"fields space":    {with(func(e *metav1.ManagedFieldsEntry) { e.FieldsV1 = fieldsV1(`{"f:a": {}}`) }), false},
		"fields trailing": {with(func(e *metav1.ManagedFieldsEntry) { e.FieldsV1 = fieldsV1(`{"f:a":{}}{}`) }), false},
		"fields number":   {with(func(e *metav1.ManagedFieldsEntry) { e.FieldsV1 = fieldsV1(`{"f:a":1}`) }), false},
		"fields string":   {with(func(e *metav1.ManagedFieldsEntry) { e.FieldsV1 = fieldsV1(`{"f:a":"x"}`) }), false},
		"fields list":     {with(func(e *metav1.ManagedFieldsEntry) { e.FieldsV1 = fieldsV1(`["f:a"]`) }), false},
		"fields broken":   {with(func(e *metav1.ManagedFieldsEntry) { e.FieldsV1 = fieldsV1(`{"f:a":{}`) }), false},
		"fields bad key":  {with(func(e *metav1.ManagedFieldsEntry) { e.FieldsV1 = fieldsV1(`{"f:\q":{}}`) }), false},
		"fields ctl key":  {with(func(e *metav1.ManagedFieldsEntry) { e.FieldsV1 = fieldsV1("{\"f:\t\":{}}") }), false},
		"fields utf8": {with(func(e *metav1.ManagedFieldsEntry) {
			e.FieldsV1 = fieldsV1("{\"f:\xff\xfe\":{},\"f:\\u00e9\\ud800\":{}}")
		}), true},
		"fields duplicate": {with(func(e *metav1.ManagedFieldsEntry) { e.FieldsV1 = fieldsV1(`{"f:a":{"f:b":{}},"f:a":{".":{}}}`) }), true},
		"fields deep": {with(func(e *metav1.ManagedFieldsEntry) {
			e.FieldsV1 = fieldsV1(strings.Repeat(`{"f:a":`, 150) + "{}" + strings.Repeat("}", 150))
		}), false},
		"fields cbor": {with(func(e *metav1.ManagedFieldsEntry) { e.FieldsV1 = fieldsV1("\xa1\x63f:a\xa0") }), true},
		"two": {append(with(func(e *metav1.ManagedFieldsEntry) {}), metav1.ManagedFieldsEntry{Manager: "m2", Operation: metav1.ManagedFieldsOperationApply,
			APIVersion: "v2", Time: now, FieldsType: "FieldsV1", FieldsV1: fieldsV1("{}")}), true},
	}
	// Entries as the fast getter reads them from unstructured objects.
	for name, mf := range metatest.ManagedFieldsCases() {
		if entries := ManagedFields(metatest.Object(mf)); entries != nil {
			fast := true
			for _, e := range entries {
				if e.FieldsV1 != nil {
					if _, ok := parseFields(e.FieldsV1.GetRawBytes()); !ok {
						fast = false
					}
				}
				if e.Time != nil && e.Time.IsZero() {
					fast = false
				}
			}
			cases["read "+name] = c{entries, fast}
		}
	}
	return cases
}

// objects are the objects entries are set on: with metadata (and
// managedFields already there), without, with metadata that is not a
// map, and without any content.
func objects() map[string]func() *unstructured.Unstructured {
	return map[string]func() *unstructured.Unstructured{
		"metadata": func() *unstructured.Unstructured { return metatest.Object([]any{map[string]any{"manager": "old"}}) },
		"no metadata": func() *unstructured.Unstructured {
			return &unstructured.Unstructured{Object: map[string]any{"kind": "X"}}
		},
		"metadata string": func() *unstructured.Unstructured {
			return &unstructured.Unstructured{Object: map[string]any{"metadata": "x"}}
		},
		"no object": func() *unstructured.Unstructured { return &unstructured.Unstructured{} },
		"metadata nil map": func() *unstructured.Unstructured {
			return &unstructured.Unstructured{Object: map[string]any{"metadata": nil}}
		},
	}
}

// TestSetManagedFields: SetManagedFields leaves every object as
// Unstructured.SetManagedFields does, and takes the direct conversion for
// what the field manager writes.
func TestSetManagedFields(t *testing.T) {
	for name, tc := range setManagedFieldsCases(t) {
		for oname, obj := range objects() {
			t.Run(name+"/"+oname, func(t *testing.T) {
				want, got := obj(), obj()
				want.SetManagedFields(tc.entries)
				SetManagedFields(got, tc.entries)
				if !reflect.DeepEqual(got.Object, want.Object) {
					t.Fatalf("SetManagedFields:\n%#v\nUnstructured.SetManagedFields:\n%#v", got.Object, want.Object)
				}
			})
		}
		fast := tc.entries != nil
		for i := range tc.entries {
			if _, ok := managedFieldsEntry(&tc.entries[i]); !ok {
				fast = false
			}
		}
		if fast != tc.fast {
			t.Errorf("%s: direct conversion %v, want %v", name, fast, tc.fast)
		}
	}
}

// TestSetManagedFieldsRandom compares SetManagedFields with
// Unstructured.SetManagedFields over random sets of paths, encoded as the
// field manager encodes them.
func TestSetManagedFieldsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	names := []string{"a", "spec", "f:x", `q"uote`, `back\slash`, "<&>", "é", "\u2028", "k:{}", ".", ""}
	pick := func() string { return names[r.IntN(len(names))] }
	for i := range 2000 {
		var paths []fieldpath.Path
		for range r.IntN(6) {
			var p []any
			for range 1 + r.IntN(4) {
				switch r.IntN(4) {
				case 0:
					p = append(p, fieldpath.KeyByFields("name", pick(), "n", r.IntN(3)))
				case 1:
					p = append(p, value.NewValueInterface(pick()))
				case 2:
					p = append(p, r.IntN(3))
				default:
					p = append(p, pick())
				}
			}
			paths = append(paths, fieldpath.MakePathOrDie(p...))
		}
		entries := []metav1.ManagedFieldsEntry{{Manager: pick(), Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
			Time: &metav1.Time{Time: time.Unix(r.Int64N(1<<32), 0)}, FieldsType: "FieldsV1", FieldsV1: setFields(t, paths...)}}
		want, got := metatest.Object(nil), metatest.Object(nil)
		want.SetManagedFields(entries)
		SetManagedFields(got, entries)
		if !reflect.DeepEqual(got.Object, want.Object) {
			t.Fatalf("%d: %s:\nSetManagedFields:\n%#v\nUnstructured.SetManagedFields:\n%#v", i, entries[0].FieldsV1.GetRawBytes(), got.Object, want.Object)
		}
		if _, ok := managedFieldsEntry(&entries[0]); !ok {
			t.Fatalf("%d: %s: not converted directly", i, entries[0].FieldsV1.GetRawBytes())
		}
	}
}

func BenchmarkSetManagedFields(b *testing.B) {
	entries := setManagedFieldsCases(b)["two"].entries
	u := metatest.Object(nil)
	b.Run("unstructured", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			u.SetManagedFields(entries)
		}
	})
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			SetManagedFields(u, entries)
		}
	})
}
