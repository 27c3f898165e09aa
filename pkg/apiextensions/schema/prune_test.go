package schema

import (
	"encoding/json"
	"reflect"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/utils/ptr"
)

// testSchema covers nested objects, arrays, maps, preserve-unknown-fields,
// embedded resources, int-or-string and defaults.
func testSchema() *apiextensionsv1.JSONSchemaProps {
	obj := func(props map[string]apiextensionsv1.JSONSchemaProps) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props}
	}
	def := func(raw string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(raw)} }
	return &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": obj(map[string]apiextensionsv1.JSONSchemaProps{
				"replicas": {Type: "integer", Default: def(`1`)},
				"mode":     {Type: "string", Default: def(`"fast"`), Nullable: true},
				"tier":     {Type: "string", Default: def(`"gold"`)},
				"port":     {XIntOrString: true, AnyOf: []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}},
				"nested": {Type: "object", Default: def(`{}`), Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"a": {Type: "string", Default: def(`"x"`)},
				}},
				"list": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: ptr.To(obj(map[string]apiextensionsv1.JSONSchemaProps{
					"name": {Type: "string"},
					"prio": {Type: "integer", Default: def(`5`)},
				}))}},
				"labels": {Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: ptr.To(obj(map[string]apiextensionsv1.JSONSchemaProps{
					"v":   {Type: "string"},
					"on":  {Type: "boolean", Default: def(`true`)},
					"obj": {Type: "object", Default: def(`{"k":[1,2]}`), XPreserveUnknownFields: ptr.To(true)},
				}))}},
				"free": {Type: "object", XPreserveUnknownFields: ptr.To(true), Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"known": obj(map[string]apiextensionsv1.JSONSchemaProps{"k": {Type: "string"}}),
				}},
				"template": {Type: "object", XEmbeddedResource: true, Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"spec": obj(map[string]apiextensionsv1.JSONSchemaProps{"image": {Type: "string"}}),
				}},
			}),
		},
	}
}

func decode(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := utiljson.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return m
}

func TestPrune(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		pruned         []string
	}{
		{"root keeps type meta", `{"apiVersion":"a/v1","kind":"K","metadata":{"name":"n","zzz":1},"other":1}`,
			`{"apiVersion":"a/v1","kind":"K","metadata":{"name":"n","zzz":1}}`, []string{"other"}},
		{"nested", `{"spec":{"replicas":2,"foo":1,"nested":{"a":"b","c":1}}}`,
			`{"spec":{"replicas":2,"nested":{"a":"b"}}}`, []string{"spec.foo", "spec.nested.c"}},
		{"array items", `{"spec":{"list":[{"name":"a","x":1},{"y":2}]}}`,
			`{"spec":{"list":[{"name":"a"},{}]}}`, []string{"spec.list[0].x", "spec.list[1].y"}},
		{"map values", `{"spec":{"labels":{"k1":{"v":"a","x":1},"k2":{}}}}`,
			`{"spec":{"labels":{"k1":{"v":"a"},"k2":{}}}}`, []string{"spec.labels[k1].x"}},
		{"preserve unknown", `{"spec":{"free":{"any":{"deep":1},"known":{"k":"v","drop":1}}}}`,
			`{"spec":{"free":{"any":{"deep":1},"known":{"k":"v"}}}}`, []string{"spec.free.known.drop"}},
		{"embedded resource", `{"spec":{"template":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","bogus":1},"spec":{"image":"i","x":1},"extra":2}}}`,
			`{"spec":{"template":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"image":"i"}}}}`,
			[]string{"spec.template.extra", "spec.template.metadata.bogus", "spec.template.spec.x"}},
		{"int-or-string", `{"spec":{"port":"http"}}`, `{"spec":{"port":"http"}}`, nil},
		{"wrong types kept for validation", `{"spec":{"nested":"str","list":{"a":1}}}`, `{"spec":{"nested":"str","list":{}}}`, []string{"spec.list.a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := decode(t, tc.in)
			pruned := Prune(obj, testSchema())
			if want := decode(t, tc.want); !reflect.DeepEqual(obj, want) {
				t.Errorf("got %v, want %v", obj, want)
			}
			if !reflect.DeepEqual(pruned, tc.pruned) {
				t.Errorf("got pruned %q, want %q", pruned, tc.pruned)
			}
		})
	}
}

func TestPruneMetadata(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		pruned         []string
	}{
		{"unknown fields go", `{"metadata":{"name":"n","zzz":1,"labels":{"a":"b"},"aaa":{}},"spec":{"x":1}}`,
			`{"metadata":{"name":"n","labels":{"a":"b"}},"spec":{"x":1}}`, []string{"metadata.aaa", "metadata.zzz"}},
		{"every ObjectMeta field stays", `{"metadata":{"name":"n","generateName":"g","namespace":"ns","selfLink":"s","uid":"u","resourceVersion":"1","generation":1,"creationTimestamp":null,"deletionTimestamp":null,"deletionGracePeriodSeconds":0,"labels":{},"annotations":{},"ownerReferences":[],"finalizers":[],"managedFields":[]}}`,
			`{"metadata":{"name":"n","generateName":"g","namespace":"ns","selfLink":"s","uid":"u","resourceVersion":"1","generation":1,"creationTimestamp":null,"deletionTimestamp":null,"deletionGracePeriodSeconds":0,"labels":{},"annotations":{},"ownerReferences":[],"finalizers":[],"managedFields":[]}}`, nil},
		{"no metadata", `{"spec":{}}`, `{"spec":{}}`, nil},
		{"metadata not an object", `{"metadata":"x"}`, `{"metadata":"x"}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := decode(t, tc.in)
			pruned := PruneMetadata(obj)
			if want := decode(t, tc.want); !reflect.DeepEqual(obj, want) {
				t.Errorf("got %v, want %v", obj, want)
			}
			if !reflect.DeepEqual(pruned, tc.pruned) {
				t.Errorf("got pruned %q, want %q", pruned, tc.pruned)
			}
		})
	}
}

func TestDefault(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"absent and nested default", `{"spec":{}}`,
			`{"spec":{"replicas":1,"mode":"fast","tier":"gold","nested":{"a":"x"}}}`},
		{"set values kept", `{"spec":{"replicas":3,"mode":"slow","tier":"t","nested":{"a":"b"}}}`,
			`{"spec":{"replicas":3,"mode":"slow","tier":"t","nested":{"a":"b"}}}`},
		{"null: nullable kept, non-nullable defaulted", `{"spec":{"mode":null,"tier":null,"replicas":0,"nested":{}}}`,
			`{"spec":{"mode":null,"tier":"gold","replicas":0,"nested":{"a":"x"}}}`},
		{"array items", `{"spec":{"replicas":1,"mode":"m","tier":"t","nested":{"a":"b"},"list":[{"name":"a"},{"prio":1}]}}`,
			`{"spec":{"replicas":1,"mode":"m","tier":"t","nested":{"a":"b"},"list":[{"name":"a","prio":5},{"prio":1}]}}`},
		{"map values", `{"spec":{"replicas":1,"mode":"m","tier":"t","nested":{"a":"b"},"labels":{"k":{}}}}`,
			`{"spec":{"replicas":1,"mode":"m","tier":"t","nested":{"a":"b"},"labels":{"k":{"on":true,"obj":{"k":[1,2]}}}}}`},
		{"no spec: nothing", `{"kind":"K"}`, `{"kind":"K"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := decode(t, tc.in)
			ApplyDefaults(obj, testSchema())
			if want := decode(t, tc.want); !reflect.DeepEqual(obj, want) {
				t.Errorf("got %v, want %v", obj, want)
			}
		})
	}
}

func TestDefaultsAreCopies(t *testing.T) {
	s := testSchema()
	a, b := decode(t, `{"spec":{"labels":{"x":{}}}}`), decode(t, `{"spec":{"labels":{"x":{}}}}`)
	ApplyDefaults(a, s)
	ApplyDefaults(b, s)
	a["spec"].(map[string]any)["labels"].(map[string]any)["x"].(map[string]any)["obj"].(map[string]any)["k"].([]any)[0] = int64(9)
	got := b["spec"].(map[string]any)["labels"].(map[string]any)["x"].(map[string]any)["obj"].(map[string]any)["k"].([]any)[0]
	if got != int64(1) {
		t.Errorf("got %v after changing another object's default, want 1", got)
	}
}

func FuzzPruneDefault(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"spec":{"foo":1}}`, `{"spec":{"list":[{"x":1},null,3]}}`,
		`{"spec":{"labels":{"a":null,"b":[1],"c":{"obj":null}}}}`,
		`{"spec":{"template":{"metadata":"x","spec":[]}}}`, `{"spec":null}`,
		`{"spec":{"free":{"known":[1]},"nested":null}}`,
	} {
		f.Add(seed)
	}
	s := testSchema()
	f.Fuzz(func(t *testing.T, in string) {
		var obj map[string]any
		if err := utiljson.Unmarshal([]byte(in), &obj); err != nil || obj == nil {
			return
		}
		Prune(obj, s)
		ApplyDefaults(obj, s)
		if _, err := json.Marshal(obj); err != nil {
			t.Fatalf("result not JSON: %v", err)
		}
		// Pruning again after defaulting finds nothing: defaults are in
		// the schema.
		if p := Prune(obj, s); len(p) > 0 {
			t.Errorf("got pruned %q on the second pass, want none", p)
		}
	})
}
