package customresource

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/api/unstructuredmeta/metatest"
	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

// TestUpdatesAsUpstream: the field managers FieldManagers builds record,
// on updates of the main resource and of /status, exactly the object
// (managedFields included, deep-equal) that upstream's CRD field manager
// records on the same inputs, over random sequences of updates: two
// versions, sixteen managers (more than the ten update entries kept),
// clients that send back the managedFields they got, drop them, reset
// them, change them or send ones of odd shapes.
func TestUpdatesAsUpstream(t *testing.T) {
	conv, fm, kinds := twoVersionWidgets(t, func() *apiextensionsv1.JSONSchemaProps {
		s := crdtest.TypedSchema()
		s.Properties["status"] = apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptrTrue()}
		return s
	})
	factory := FieldManagers(kinds)
	reset := map[string]map[fieldpath.APIVersion]*fieldpath.Set{
		"":       {"example.com/v1": fieldpath.NewSet(fieldpath.MakePathOrDie("status")), "example.com/v2": fieldpath.NewSet(fieldpath.MakePathOrDie("status"))},
		"status": {"example.com/v1": fieldpath.NewSet(fieldpath.MakePathOrDie("spec")), "example.com/v2": fieldpath.NewSet(fieldpath.MakePathOrDie("spec"))},
	}
	type managerPair struct {
		ours interface {
			UpdateNoErrors(live, obj runtime.Object, manager string) runtime.Object
		}
		upstream *managedfields.FieldManager
	}
	pairs := map[string]managerPair{}
	for _, v := range []string{"v1", "v2"} {
		for _, sub := range []string{"", "status"} {
			kind := schema.GroupVersionKind{Group: "example.com", Version: v, Kind: "Widget"}
			ours, err := factory(kind, sub, reset[sub])
			if err != nil {
				t.Fatal(err)
			}
			filters := map[fieldpath.APIVersion]fieldpath.Filter{}
			for k, s := range reset[sub] {
				filters[k] = fieldpath.NewExcludeSetFilter(s)
			}
			up, err := managedfields.NewDefaultCRDFieldManager(fm.TypeConverter, Convertor{Converter: conv}, fm.Defaulter, Creater{}, kind, kind.GroupVersion(), sub, filters)
			if err != nil {
				t.Fatal(err)
			}
			pairs[v+"/"+sub] = managerPair{ours, up}
		}
	}
	odd := metatest.ManagedFieldsCases()
	var oddNames []string
	for name := range odd {
		oddNames = append(oddNames, name)
	}
	slices.Sort(oddNames)

	r := rand.New(rand.NewPCG(7, 8))
	most, tracked := 0, 0
	for seq := range 80 {
		version := "v1"
		// Half the sequences write through both versions (entries of
		// both, converted between them), half through one only (kapi's
		// own update path, fieldmanager.crUpdater, takes those).
		served := [][]string{{"v1", "v2"}, {"v1"}, {"v1", "v2"}, {"v2"}}[seq%4]
		live := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget"}}
		for step := range 30 {
			v := served[r.IntN(len(served))]
			sub := []string{"", "", "status"}[r.IntN(3)]
			if step == 0 {
				sub = ""
			}
			manager := fmt.Sprintf("manager-%d", r.IntN(16))
			liveV, err := Convertor{Converter: conv}.ConvertToVersion(live, schema.GroupVersion{Group: "example.com", Version: v})
			if err != nil {
				t.Fatal(err)
			}
			if step >= 25 && r.IntN(2) == 0 && len(liveV.(*unstructured.Unstructured).GetManagedFields()) > 0 {
				// A live object with managedFields the update's typed
				// comparison cannot leave out (see
				// fieldmanager.skippableLiveManagedFields), or can
				// (late only, as resets: they may end the tracking).
				liveV = liveV.DeepCopyObject()
				md := liveV.(*unstructured.Unstructured).Object["metadata"].(map[string]any)
				entry := md["managedFields"].([]any)[0].(map[string]any)
				switch r.IntN(8) {
				case 0:
					entry["fieldsV1"] = map[string]any{"f:metadata": map[string]any{"f:managedFields": map[string]any{}}}
				case 1:
					entry["fieldsV1"] = map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{}}, "f:spec": map[string]any{"f:name": map[string]any{}}}
				case 2:
					entry["time"] = "not a time"
				case 3:
					entry["manager"] = int64(3)
				case 4:
					entry["extra"] = "x"
				case 5:
					entry["subresource"] = nil
				case 6:
					entry["fieldsV1"] = map[string]any{"f:spec": map[string]any{"f:name": "x"}}
				default:
					md["managedFields"] = runtime.DeepCopyJSONValue(normalise(odd[oddNames[r.IntN(len(oddNames))]]))
				}
			}
			newObj := liveV.(*unstructured.Unstructured).DeepCopy()
			if step == 0 {
				newObj.SetName("w")
				newObj.SetNamespace("ns")
			}
			mutate(r, newObj)
			if r.IntN(2) == 0 { // a field of the manager's own, kept by its entry
				_ = unstructured.SetNestedField(newObj.Object, fmt.Sprint(step), "metadata", "annotations", manager)
			}
			how := "echo"
			choice := r.IntN(12)
			if choice < 4 && step < 25 {
				choice = 4 + r.IntN(8) // a reset (or odd entries) ends the tracking of updates: late only
			}
			switch choice {
			case 0:
				how = "drop"
				unstructured.RemoveNestedField(newObj.Object, "metadata", "managedFields")
			case 1:
				how = "reset []"
				_ = unstructured.SetNestedField(newObj.Object, []any{}, "metadata", "managedFields")
			case 2:
				how = "reset [{}]"
				_ = unstructured.SetNestedField(newObj.Object, []any{map[string]any{}}, "metadata", "managedFields")
			case 3:
				name := oddNames[r.IntN(len(oddNames))]
				how = "odd " + name
				if md, ok := newObj.Object["metadata"].(map[string]any); ok {
					md["managedFields"] = runtime.DeepCopyJSONValue(normalise(odd[name]))
				}
			case 4:
				how = "first entry only"
				if mf := newObj.GetManagedFields(); len(mf) > 1 {
					newObj.SetManagedFields(mf[:1])
				}
			}
			var ours, upstream *unstructured.Unstructured
			for attempt := 0; ; attempt++ {
				liveOurs, liveUp := liveV.DeepCopyObject(), liveV.DeepCopyObject()
				start := time.Now().Unix()
				ours = pairs[v+"/"+sub].ours.UpdateNoErrors(liveOurs, newObj.DeepCopy(), manager).(*unstructured.Unstructured)
				upstream = pairs[v+"/"+sub].upstream.UpdateNoErrors(liveUp, newObj.DeepCopy(), manager).(*unstructured.Unstructured)
				if !reflect.DeepEqual(liveOurs, liveV) || !reflect.DeepEqual(liveUp, liveV) {
					t.Fatalf("sequence %d step %d: the live object changed", seq, step)
				}
				if time.Now().Unix() == start || attempt == 3 {
					break // both in one second: the same time in their entries
				}
			}
			if !reflect.DeepEqual(ours.Object, upstream.Object) {
				t.Fatalf("sequence %d step %d (%s, subresource %q, %s, managedFields %s):\nours:     %#v\nupstream: %#v",
					seq, step, v, sub, manager, how, ours.Object, upstream.Object)
			}
			stored, err := Convertor{Converter: conv}.ConvertToVersion(ours, schema.GroupVersion{Group: "example.com", Version: version})
			if err != nil {
				t.Fatal(err)
			}
			live = stored.(*unstructured.Unstructured)
			if n := len(live.GetManagedFields()); n >= 2 {
				tracked++
				most = max(most, n)
			}
			if step == 0 {
				live.SetUID("uid-1")
			}
			live.SetResourceVersion(fmt.Sprint(step + 1))
		}
	}
	if most < 10 || tracked < 80*20 {
		t.Errorf("at most %d managedFields entries, %d steps with two or more: the sequences do not exercise the managers", most, tracked)
	}
}

// normalise is a metatest case's managedFields with the values a JSON
// decode could not give (which a deep copy rejects) left out.
func normalise(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if ok := jsonValue(e); ok {
				out[k] = normalise(e)
			}
		}
		return out
	case []any:
		out := []any{}
		for _, e := range v {
			if jsonValue(e) {
				out = append(out, normalise(e))
			}
		}
		return out
	}
	return v
}

func jsonValue(v any) bool {
	switch v := v.(type) {
	case nil, string, bool, int64, map[string]any, []any:
		return true
	case float64:
		return v == v && v-v == 0
	}
	return false
}

// mutate changes a few of obj's fields at random.
func mutate(r *rand.Rand, obj *unstructured.Unstructured) {
	set := func(v any, path ...string) { _ = unstructured.SetNestedField(obj.Object, v, path...) }
	for range 1 + r.IntN(3) {
		switch r.IntN(10) {
		case 0:
			set(fmt.Sprint("n", r.IntN(3)), "spec", "name")
		case 1:
			set(int64(r.IntN(5)), "spec", "replicas")
		case 2:
			set([]any{int64(r.IntN(3)), int64(3)}, "spec", "list")
		case 3:
			set(map[string]any{"x": fmt.Sprint(r.IntN(3))}, "spec", "labels")
		case 4:
			set([]any{map[string]any{"name": "e", "value": fmt.Sprint(r.IntN(3))}, map[string]any{"name": fmt.Sprint("f", r.IntN(2))}}, "spec", "entries")
		case 5:
			unstructured.RemoveNestedField(obj.Object, "spec", "labels")
		case 6:
			set(map[string]any{"phase": fmt.Sprint(r.IntN(3))}, "status")
		case 7:
			set(map[string]any{"a": fmt.Sprint(r.IntN(3))}, "metadata", "labels")
		case 8: // a field the managers never own (stripMetaManager)
			set(int64(r.IntN(3)), "metadata", "generation")
		default:
			set([]any{"a", fmt.Sprint("s", r.IntN(3))}, "spec", "set")
		}
	}
}

func ptrTrue() *bool { t := true; return &t }
