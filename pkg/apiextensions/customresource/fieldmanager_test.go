package customresource

import (
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/apiextensions/conversion"
	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
	"github.com/kapi-dev/kapi/pkg/endpoints/fieldmanager"
	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/openapi"
)

// TestReadConvertorUpdates: the field managers FieldManagers builds
// (updates convert through ReadConvertor, without copies) record the same
// managedFields as field managers converting through Convertor alone (a
// copy per conversion, as before), for a CRD with two versions (strategy
// None) whose objects are updated by managers in either version, and
// leave the live object they are given unchanged.
func TestReadConvertorUpdates(t *testing.T) {
	conv, fm, kinds := twoVersionWidgets(t, func() *apiextensionsv1.JSONSchemaProps { return crdtest.TypedSchema() })
	fast := FieldManagers(kinds)
	copying := func(kind schema.GroupVersionKind) handlers.FieldManager {
		m, err := fieldmanager.New(fieldmanager.Config{Kind: kind, TypeConverter: fm.TypeConverter,
			Convertor: Convertor{Converter: conv}, Defaulter: fm.Defaulter, Creater: Creater{}, CustomResource: true})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}

	widget := func(v string, spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/" + v, "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": "ns", "resourceVersion": "1"},
			"spec":     spec,
		}}
	}
	steps := []struct {
		version, manager string
		spec             map[string]any
	}{
		{"v1", "alice", map[string]any{"name": "a", "replicas": int64(1)}},
		{"v2", "bob", map[string]any{"name": "a", "replicas": int64(2), "labels": map[string]any{"x": "y"}}},
		{"v1", "alice", map[string]any{"name": "b", "replicas": int64(2), "labels": map[string]any{"x": "y"}, "list": []any{int64(1)}}},
		{"v2", "carol", map[string]any{"name": "b", "replicas": int64(2), "labels": map[string]any{"x": "z"}, "list": []any{int64(1)},
			"entries": []any{map[string]any{"name": "e", "value": "1"}}}},
		{"v1", "bob", map[string]any{"name": "b", "labels": map[string]any{"x": "z"}, "list": []any{int64(1)},
			"entries": []any{map[string]any{"name": "e", "value": "2"}}}},
	}
	var liveFast, liveCopy *unstructured.Unstructured
	for i, st := range steps {
		kind := schema.GroupVersionKind{Group: "example.com", Version: st.version, Kind: "Widget"}
		m, err := fast(kind, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		in := func(live *unstructured.Unstructured) (*unstructured.Unstructured, *unstructured.Unstructured) {
			newObj := widget(st.version, st.spec)
			if live == nil {
				return newObj, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/" + st.version, "kind": "Widget"}}
			}
			newObj.SetManagedFields(live.GetManagedFields())
			l, err := Convertor{Converter: conv}.ConvertToVersion(live, kind.GroupVersion())
			if err != nil {
				t.Fatal(err)
			}
			return newObj, l.(*unstructured.Unstructured)
		}
		newFast, oldFast := in(liveFast)
		oldFastCopy := oldFast.DeepCopy()
		gotFast := m.UpdateNoErrors(oldFast, newFast, st.manager).(*unstructured.Unstructured)
		if !reflect.DeepEqual(oldFast, oldFastCopy) {
			t.Fatalf("step %d: the live object changed:\n%v\n%v", i, oldFast, oldFastCopy)
		}
		newCopy, oldCopy := in(liveCopy)
		gotCopy := copying(kind).UpdateNoErrors(oldCopy, newCopy, st.manager).(*unstructured.Unstructured)
		if a, b := managers(gotFast), managers(gotCopy); a != b {
			t.Fatalf("step %d: managedFields differ:\n%s\n%s", i, a, b)
		}
		gotFast.SetManagedFields(nil)
		gotCopy.SetManagedFields(nil)
		if !reflect.DeepEqual(gotFast, gotCopy) {
			t.Fatalf("step %d: objects differ:\n%v\n%v", i, gotFast, gotCopy)
		}
		liveFast = m.UpdateNoErrors(oldFast, widget(st.version, st.spec), st.manager).(*unstructured.Unstructured)
		liveCopy = copying(kind).UpdateNoErrors(oldCopy, widget(st.version, st.spec), st.manager).(*unstructured.Unstructured)
		if len(liveFast.GetManagedFields()) == 0 {
			t.Fatalf("step %d: no managedFields", i)
		}
	}
	if got := managers(liveFast); len(liveFast.GetManagedFields()) < 3 {
		t.Fatalf("want entries of three managers in two versions, got %s", got)
	}
}

// managers prints managedFields without their times, sorted: entries
// are ordered by their times' seconds first, which two field managers
// called a moment apart may see differently.
func managers(u *unstructured.Unstructured) string {
	var lines []string
	for _, e := range u.GetManagedFields() {
		lines = append(lines, fmt.Sprintf("%s %s %s %s\n", e.Manager, e.Operation, e.APIVersion, e.FieldsV1.Raw))
	}
	slices.Sort(lines)
	return strings.Join(lines, "")
}

// twoVersionWidgets is the test CRD of the field-manager tests
// (widgets.example.com, versions v1 (storage) and v2 with schema(version)),
// its converter, and the FieldManagement of both versions' kinds.
func twoVersionWidgets(t *testing.T, schemaOf func() *apiextensionsv1.JSONSchemaProps) (conversion.Converter, FieldManagement, map[schema.GroupVersionKind]FieldManagement) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
		},
	}
	for _, v := range []string{"v1", "v2"} {
		crd.Spec.Versions = append(crd.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{
			Name: v, Served: true, Storage: v == "v1", Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: schemaOf()},
		})
	}
	conv, err := conversion.New(crd, conversion.Options{})
	if err != nil {
		t.Fatal(err)
	}
	meta, err := MetaSchemas(openapi.Default())
	if err != nil {
		t.Fatal(err)
	}
	fm := FieldManagement{TypeConverter: NewTypeConverter(crd, meta, slog.New(slog.DiscardHandler)), Defaulter: NewDefaulter(crd), Converter: conv}
	kinds := map[schema.GroupVersionKind]FieldManagement{}
	for _, v := range []string{"v1", "v2"} {
		kinds[schema.GroupVersionKind{Group: "example.com", Version: v, Kind: "Widget"}] = fm
	}
	return conv, fm, kinds
}
