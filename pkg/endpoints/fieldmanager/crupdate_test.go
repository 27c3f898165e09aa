package fieldmanager

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
)

var widgetKind = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

// widgetManagers are a custom-resource Manager of Widgets (deduced types)
// and upstream's field manager on the same parts.
func widgetManagers(t *testing.T) (*Manager, *managedfields.FieldManager) {
	t.Helper()
	tc := managedfields.NewDeducedTypeConverter()
	ours := newManager(t, Config{Kind: widgetKind, TypeConverter: tc, Convertor: unstructuredConvertor{},
		Defaulter: noDefaults{}, Creater: unstructuredCreater{}, CustomResource: true})
	upstream, err := managedfields.NewDefaultCRDFieldManager(tc, unstructuredConvertor{}, noDefaults{}, unstructuredCreater{},
		widgetKind, widgetKind.GroupVersion(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return ours, upstream
}

// updateBoth runs one update through ours and upstream's, redoing it if
// the clock's second changed in between (entries' times are to the
// second), and fails unless their results are deep-equal and the live
// object is unchanged. answered tells whether crUpdater did it.
func updateBoth(t *testing.T, ours *Manager, upstream *managedfields.FieldManager, live, newObj *unstructured.Unstructured, manager string) (out *unstructured.Unstructured, answered bool) {
	t.Helper()
	out, answered, err := tryUpdateBoth(ours, upstream, live, newObj, manager)
	if err != nil {
		t.Fatal(err)
	}
	return out, answered
}

// tryUpdateBoth is updateBoth reporting what fails.
func tryUpdateBoth(ours *Manager, upstream *managedfields.FieldManager, live, newObj *unstructured.Unstructured, manager string) (out *unstructured.Unstructured, answered bool, err error) {
	cr := ours.managers().cr
	if cr == nil {
		return nil, false, fmt.Errorf("the custom resources' Manager has no crUpdater")
	}
	for attempt := 0; ; attempt++ {
		start := time.Now().Unix()
		liveCopy := live.DeepCopy()
		var got runtime.Object
		if r, ok := cr.update(liveCopy, newObj.DeepCopy(), manager); ok {
			got, answered = r, true
		} else {
			got, answered = ours.UpdateNoErrors(liveCopy, newObj.DeepCopy(), manager), false
		}
		want := upstream.UpdateNoErrors(live.DeepCopy(), newObj.DeepCopy(), manager)
		if !reflect.DeepEqual(liveCopy, live) {
			return nil, false, fmt.Errorf("update by %s: the live object changed", manager)
		}
		if time.Now().Unix() != start && attempt < 3 {
			continue
		}
		if !reflect.DeepEqual(got.(*unstructured.Unstructured).Object, want.(*unstructured.Unstructured).Object) {
			return nil, false, fmt.Errorf("update by %s:\nours:     %#v\nupstream: %#v", manager, got, want)
		}
		return got.(*unstructured.Unstructured), answered, nil
	}
}

func widget(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name, "namespace": "ns"},
		"spec":     map[string]any{"n": int64(0), "text": "x", "tags": []any{"a", "b"}},
	}}
}

// TestCRUpdaterAnswers: updates of custom resources that send back the
// managedFields they got (or none) are done by crUpdater, with
// upstream's result; concurrent updates of many objects share the sets
// decoded from their (equal) fieldsV1.
func TestCRUpdaterAnswers(t *testing.T) {
	ours, upstream := widgetManagers(t)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 19))
			empty := &unstructured.Unstructured{}
			empty.SetGroupVersionKind(widgetKind)
			live, _, err := tryUpdateBoth(ours, upstream, empty, widget(fmt.Sprint("w", g)), "creator")
			if err != nil {
				t.Error(err)
				return
			}
			live.SetUID(types.UID(fmt.Sprint("uid-", g)))
			answered := 0
			for step := range 200 {
				newObj := live.DeepCopy()
				switch r.IntN(4) {
				case 0:
					_ = unstructured.SetNestedField(newObj.Object, int64(step), "spec", "n")
				case 1:
					_ = unstructured.SetNestedField(newObj.Object, fmt.Sprint(r.IntN(3)), "spec", "extra", fmt.Sprint("k", r.IntN(3)))
				case 2:
					_ = unstructured.SetNestedField(newObj.Object, fmt.Sprint(step), "metadata", "labels", "l")
				default:
					unstructured.RemoveNestedField(newObj.Object, "spec", "extra")
				}
				if r.IntN(4) == 0 {
					unstructured.RemoveNestedField(newObj.Object, "metadata", "managedFields")
				}
				manager := fmt.Sprint("manager-", r.IntN(14))
				// A field of the manager's own: more than the ten update
				// entries kept, merged by capManagersManager.
				_ = unstructured.SetNestedField(newObj.Object, fmt.Sprint(step), "metadata", "annotations", manager)
				out, ok, err := tryUpdateBoth(ours, upstream, live, newObj, manager)
				if err != nil {
					t.Errorf("step %d: %v", step, err)
					return
				}
				if ok {
					answered++
				}
				live = out
				live.SetResourceVersion(fmt.Sprint(step + 2))
			}
			if answered != 200 {
				t.Errorf("crUpdater did %d of 200 updates, want all", answered)
			}
			capped := false
			for _, e := range live.GetManagedFields() {
				capped = capped || e.Manager == "ancient-changes"
			}
			if !capped {
				t.Errorf("no ancient-changes entry after 200 updates by 14 managers: %+v", live.GetManagedFields())
			}
		})
	}
	wg.Wait()
}

// TestCRUpdaterHandsOver: what crUpdater does not do, it leaves to
// upstream's chain without changing the new object.
func TestCRUpdaterHandsOver(t *testing.T) {
	ours, upstream := widgetManagers(t)
	empty := &unstructured.Unstructured{}
	empty.SetGroupVersionKind(widgetKind)
	created := upstream.UpdateNoErrors(empty, widget("w"), "creator").(*unstructured.Unstructured)
	created.SetUID("uid")
	entry := func(mutate func(map[string]any)) func(*unstructured.Unstructured) {
		return func(u *unstructured.Unstructured) {
			e := u.Object["metadata"].(map[string]any)["managedFields"].([]any)[0].(map[string]any)
			mutate(e)
		}
	}
	cases := map[string]func(u *unstructured.Unstructured){
		"reset []": func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, []any{}, "metadata", "managedFields")
		},
		"reset [{}]": func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, []any{map[string]any{}}, "metadata", "managedFields")
		},
		"other version": entry(func(e map[string]any) { e["apiVersion"] = "example.com/v2" }),
		"unknown key":   entry(func(e map[string]any) { e["extra"] = "x" }),
		"non-string":    entry(func(e map[string]any) { e["manager"] = int64(1) }),
		"bad time":      entry(func(e map[string]any) { e["time"] = "yesterday" }),
		"bad operation": entry(func(e map[string]any) { e["operation"] = "Patch" }),
		"no fieldsV1":   entry(func(e map[string]any) { delete(e, "fieldsV1") }),
		"fieldsV1 leaf": entry(func(e map[string]any) { e["fieldsV1"] = map[string]any{"f:spec": "x"} }),
		"fieldsV1 key":  entry(func(e map[string]any) { e["fieldsV1"] = map[string]any{"spec": map[string]any{}} }),
		"entry not a map": func(u *unstructured.Unstructured) {
			u.Object["metadata"].(map[string]any)["managedFields"] = []any{"x"}
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			newObj := created.DeepCopy()
			_ = unstructured.SetNestedField(newObj.Object, int64(1), "spec", "n")
			mutate(newObj)
			before := newObj.DeepCopy()
			if _, ok := ours.managers().cr.update(created.DeepCopy(), newObj, "m"); ok {
				t.Fatal("crUpdater answered, want it handed over")
			}
			if !reflect.DeepEqual(newObj, before) {
				t.Fatalf("the new object changed:\ngot  %#v\nwant %#v", newObj, before)
			}
			updateBoth(t, ours, upstream, created, before, "m")
		})
	}
}

// TestSetCache: equal fieldsV1 share one decoded set whatever their
// maps' order; others do not; what is not an object of objects is not
// decoded.
func TestSetCache(t *testing.T) {
	c := &setCache{byHash: map[uint64][]*cachedSet{}}
	a := map[string]any{"f:spec": map[string]any{"f:n": map[string]any{}, "f:text": map[string]any{}}, "f:metadata": map[string]any{"f:labels": map[string]any{".": map[string]any{}, "f:x": map[string]any{}}}}
	b := copyFields(a)
	s1, ok := c.get(a)
	if !ok {
		t.Fatal("not decoded")
	}
	s2, _ := c.get(b)
	if s1 != s2 {
		t.Error("equal fieldsV1 decoded twice")
	}
	b["f:spec"].(map[string]any)["f:tags"] = map[string]any{}
	if s3, _ := c.get(b); s3 == s1 || s3.set.Equals(s1.set) {
		t.Error("different fieldsV1 share a set")
	}
	if got, want := string(s1.json()), `{"f:metadata":{"f:labels":{".":{},"f:x":{}}},"f:spec":{"f:n":{},"f:text":{}}}`; got != want {
		t.Errorf("json: got %s, want %s", got, want)
	}
	for _, bad := range []map[string]any{{"f:spec": "x"}, {"f:spec": map[string]any{"f:n": nil}}} {
		if _, ok := c.get(bad); ok {
			t.Errorf("%v decoded", bad)
		}
	}
	// Past its bound the cache starts again.
	for i := range maxCachedSets + 1 {
		if _, ok := c.get(map[string]any{fmt.Sprint("f:x", i): map[string]any{}}); !ok {
			t.Fatal("not decoded")
		}
	}
	if c.n > maxCachedSets || c.nodes > maxCachedNodes {
		t.Errorf("%d sets of %d nodes kept, want at most %d and %d", c.n, c.nodes, maxCachedSets, maxCachedNodes)
	}
}
