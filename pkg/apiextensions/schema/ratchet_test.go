package schema

import (
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

// TestSchemaRatcheting checks that on update OpenAPI schema errors of
// unchanged values are dropped, and those of changed values kept.
func TestSchemaRatcheting(t *testing.T) {
	s := crdtest.TypedSchema()
	spec := s.Properties["spec"]
	spec.Required = []string{"name"}
	name := spec.Properties["name"]
	name.MaxLength = ptrInt64(3)
	spec.Properties["name"] = name
	rep := spec.Properties["replicas"]
	rep.Maximum = &[]float64{10}[0]
	spec.Properties["replicas"] = rep
	s.Properties["spec"] = spec
	s = crdtest.WithItemRule(s, "entries", apiextensionsv1.ValidationRule{Rule: "true"})
	entries := s.Properties["spec"].Properties["entries"]
	entries.Items.Schema.Properties["value"] = apiextensionsv1.JSONSchemaProps{Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"ok"`)}}}
	sv, err := NewValidator(s)
	if err != nil {
		t.Fatal(err)
	}
	entry := func(n, val string) map[string]any { return map[string]any{"name": n, "value": val} }
	cases := []struct {
		name string
		spec map[string]any
		old  map[string]any
		want []string
	}{
		{name: "unchanged invalid values", spec: map[string]any{"name": "toolong", "replicas": int64(20), "entries": []any{entry("a", "bad")}, "enabled": true},
			old: map[string]any{"name": "toolong", "replicas": int64(20), "entries": []any{entry("a", "bad")}, "enabled": false}},
		{name: "missing required of unchanged object", spec: map[string]any{"replicas": int64(1)}, old: map[string]any{"replicas": int64(1)}},
		{name: "missing required of changed object", spec: map[string]any{"replicas": int64(2)}, old: map[string]any{"replicas": int64(1)},
			want: []string{`spec.name: Required value`}},
		{name: "changed invalid value", spec: map[string]any{"name": "toolong", "replicas": int64(21)}, old: map[string]any{"name": "toolong", "replicas": int64(20)},
			want: []string{`spec.replicas: Invalid value: 21: spec.replicas in body should be less than or equal to 10`}},
		{name: "new map-list item", spec: map[string]any{"name": "a", "entries": []any{entry("b", "bad"), entry("a", "bad")}}, old: map[string]any{"name": "a", "entries": []any{entry("a", "bad")}},
			want: []string{`spec.entries[0].value: Unsupported value: "bad": supported values: "ok"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range sv.ValidateUpdate(map[string]any{"spec": tc.spec}, map[string]any{"spec": tc.old}, s) {
				got = append(got, e.Error())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
