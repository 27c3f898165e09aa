package openapi

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// jsonEqual compares two values by their JSON encoding.
func jsonEqual(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var va, vb any
	if err := json.Unmarshal(ja, &va); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(jb, &vb); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(va, vb)
}

// toJSON renders schemas the way they are served.
func toJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// walk calls f for every object in the JSON value v.
func walk(v any, f func(map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		f(v)
		for _, e := range v {
			walk(e, f)
		}
	case []any:
		for _, e := range v {
			walk(e, f)
		}
	}
}

// checkClosed fails unless every $ref in schemas points, with prefix, at a
// schema in schemas, and returns how many references it saw.
func checkClosed(t *testing.T, schemas map[string]*spec.Schema, prefix string) int {
	t.Helper()
	refs := 0
	walk(toJSON(t, schemas), func(m map[string]any) {
		r, ok := m["$ref"].(string)
		if !ok {
			return
		}
		refs++
		name, ok := strings.CutPrefix(r, prefix)
		if !ok {
			t.Errorf("$ref %q does not start with %q", r, prefix)
			return
		}
		if _, ok := schemas[name]; !ok {
			t.Errorf("$ref %q points outside the closure", r)
		}
	})
	return refs
}

func TestSchemasClosure(t *testing.T) {
	t.Parallel()
	d := testDefs()
	tests := []struct {
		name   string
		build  func(...schema.GroupVersionKind) (map[string]*spec.Schema, error)
		prefix string
	}{
		{"v3", d.Schemas, refPrefixV3},
		{"v2", d.SchemasV2, refPrefixV2},
	}
	wantNames := []string{
		"io.k8s.api.coordination.v1.Lease",
		"io.k8s.api.coordination.v1.LeaseList",
		"io.k8s.api.coordination.v1.LeaseSpec",
		"io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
		"io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
		"io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry",
		"io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
		"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
		"io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
		"io.k8s.apimachinery.pkg.apis.meta.v1.ShardInfo",
		"io.k8s.apimachinery.pkg.apis.meta.v1.Time",
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.build(gvk("coordination.k8s.io", "v1", "Lease"), gvk("coordination.k8s.io", "v1", "LeaseList"))
			if err != nil {
				t.Fatal(err)
			}
			names := slices.Sorted(func(yield func(string) bool) {
				for k := range got {
					if !yield(k) {
						return
					}
				}
			})
			if !slices.Equal(names, wantNames) {
				t.Errorf("closure = %v\nwant %v", names, wantNames)
			}
			if refs := checkClosed(t, got, tt.prefix); refs == 0 {
				t.Errorf("saw no $ref at all")
			}
			lease := toJSON(t, got["io.k8s.api.coordination.v1.Lease"])
			want := []any{map[string]any{"group": "coordination.k8s.io", "kind": "Lease", "version": "v1"}}
			if !jsonEqual(t, lease[ExtensionGVK], want) {
				t.Errorf("Lease %s = %v, want %v", ExtensionGVK, lease[ExtensionGVK], want)
			}
		})
	}
}

func TestSchemasUnknown(t *testing.T) {
	t.Parallel()
	d := testDefs()
	if _, err := d.Schemas(gvk("example.com", "v1", "Widget")); err == nil {
		t.Error("Schemas(example.com/v1 Widget): got no error, want one")
	}
	if _, err := d.SchemasForNames("io.k8s.api.core.v1.NoSuchType"); err == nil {
		t.Error("SchemasForNames(NoSuchType): got no error, want one")
	}
}

// TestServedShapes checks the per-format details kube-apiserver serves:
// v3 wraps a $ref that has siblings in allOf and keeps defaults; v2 prunes
// defaults and uses IntOrString's v2 form.
func TestServedShapes(t *testing.T) {
	t.Parallel()
	d := testDefs()
	names := []string{"io.k8s.api.coordination.v1.Lease", "io.k8s.apimachinery.pkg.util.intstr.IntOrString"}

	v3, err := d.SchemasForNames(names...)
	if err != nil {
		t.Fatal(err)
	}
	meta := toJSON(t, v3["io.k8s.api.coordination.v1.Lease"])["properties"].(map[string]any)["metadata"]
	wantMeta := map[string]any{
		"allOf":       []any{map[string]any{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}},
		"default":     map[string]any{},
		"description": "metadata is the standard object metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
	}
	if !jsonEqual(t, meta, wantMeta) {
		t.Errorf("v3 Lease.metadata = %v, want %v", meta, wantMeta)
	}
	ios3 := toJSON(t, v3["io.k8s.apimachinery.pkg.util.intstr.IntOrString"])
	if _, ok := ios3["oneOf"]; !ok {
		t.Errorf("v3 IntOrString = %v, want a oneOf", ios3)
	}
	if _, ok := ios3["x-kubernetes-v2-definition"]; ok {
		t.Errorf("v3 IntOrString carries x-kubernetes-v2-definition")
	}

	v2, err := d.SchemasV2ForNames(names...)
	if err != nil {
		t.Fatal(err)
	}
	walk(toJSON(t, v2), func(m map[string]any) {
		if def, ok := m["default"]; ok {
			t.Errorf("v2 schema has default %v", def)
		}
		if _, ok := m["allOf"]; ok {
			t.Errorf("v2 schema has allOf: %v", m)
		}
	})
	ios2 := toJSON(t, v2["io.k8s.apimachinery.pkg.util.intstr.IntOrString"])
	if ios2["type"] != "string" || ios2["format"] != "int-or-string" {
		t.Errorf("v2 IntOrString = %v, want type string, format int-or-string", ios2)
	}
}

// TestMergeExtensions checks the extensions server-side apply and strategic
// merge patch depend on made it into the definitions.
func TestMergeExtensions(t *testing.T) {
	t.Parallel()
	d := testDefs()
	all := d.AllSchemas()
	tests := []struct {
		def, prop string
		want      map[string]any
	}{
		{"io.k8s.api.core.v1.PodSpec", "containers", map[string]any{
			"x-kubernetes-list-type":       "map",
			"x-kubernetes-list-map-keys":   []any{"name"},
			"x-kubernetes-patch-merge-key": "name",
			"x-kubernetes-patch-strategy":  "merge",
		}},
		{"io.k8s.api.core.v1.Container", "ports", map[string]any{
			"x-kubernetes-list-type":     "map",
			"x-kubernetes-list-map-keys": []any{"containerPort", "protocol"},
		}},
		{"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "finalizers", map[string]any{
			"x-kubernetes-list-type":      "set",
			"x-kubernetes-patch-strategy": "merge",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.def+"."+tt.prop, func(t *testing.T) {
			s, ok := all[tt.def]
			if !ok {
				t.Fatalf("no definition %q", tt.def)
			}
			p := toJSON(t, s)["properties"].(map[string]any)[tt.prop].(map[string]any)
			for k, want := range tt.want {
				if !jsonEqual(t, p[k], want) {
					t.Errorf("%s = %v, want %v", k, p[k], want)
				}
			}
		})
	}
}
