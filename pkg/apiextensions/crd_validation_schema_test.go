package apiextensions

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

func TestValidateSchemaChecks(t *testing.T) {
	const p = "spec.validation.openAPIV3Schema."
	def := func(s string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(s)} }
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	for _, tc := range []struct {
		name string
		prop apiextensionsv1.JSONSchemaProps // set as spec.properties[x]
		want []string
	}{
		{name: "valid", prop: apiextensionsv1.JSONSchemaProps{Type: "integer", Minimum: ptr.To(1.0), Default: def("3")}},
		{name: "no type", prop: apiextensionsv1.JSONSchemaProps{},
			want: []string{p + "properties[spec].properties[x].type: Required value: must not be empty for specified object fields"}},
		{name: "int-or-string needs no type", prop: apiextensionsv1.JSONSchemaProps{XIntOrString: true}},
		{name: "preserve needs no type", prop: apiextensionsv1.JSONSchemaProps{XPreserveUnknownFields: ptr.To(true)}},
		{name: "item without type", prop: apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{}}},
			want: []string{p + "properties[spec].properties[x].items.type: Required value: must not be empty for specified array items"}},
		{name: "array without items", prop: apiextensionsv1.JSONSchemaProps{Type: "array"},
			want: []string{p + "properties[spec].properties[x].items: Required value: must be specified"}},
		{name: "map value without type", prop: apiextensionsv1.JSONSchemaProps{Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextensionsv1.JSONSchemaProps{}}},
			want: []string{p + "properties[spec].properties[x].additionalProperties.type: Required value: must not be empty for specified object fields"}},
		{name: "embedded not object", prop: apiextensionsv1.JSONSchemaProps{Type: "string", XEmbeddedResource: true},
			want: []string{p + `properties[spec].properties[x].type: Invalid value: "string": must be object if x-kubernetes-embedded-resource is true`}},
		{name: "embedded without properties", prop: apiextensionsv1.JSONSchemaProps{Type: "object", XEmbeddedResource: true},
			want: []string{p + "properties[spec].properties[x].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"}},
		{name: "int-or-string and preserve", prop: apiextensionsv1.JSONSchemaProps{XIntOrString: true, XPreserveUnknownFields: ptr.To(true)},
			want: []string{p + "properties[spec].properties[x].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true"}},
		{name: "bad pattern", prop: apiextensionsv1.JSONSchemaProps{Type: "string", Pattern: "("},
			want: []string{p + `properties[spec].properties[x].pattern: Invalid value: "(": must be a valid regular expression, but isn't`}},
		{name: "default below minimum", prop: apiextensionsv1.JSONSchemaProps{Type: "integer", Minimum: ptr.To(1.0), Default: def("0")},
			want: []string{p + "properties[spec].properties[x].default: Invalid value: 0:", "greater than or equal to 1"}},
		{name: "default of the wrong type", prop: apiextensionsv1.JSONSchemaProps{Type: "integer", Default: def(`"a"`)},
			want: []string{p + `properties[spec].properties[x].default: Invalid value: "string"`}},
		{name: "default not in enum", prop: apiextensionsv1.JSONSchemaProps{Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"a"`)}}, Default: def(`"b"`)},
			want: []string{p + `properties[spec].properties[x].default: Unsupported value: "b"`}},
		{name: "default with unknown fields", prop: apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"a": str}, Default: def(`{"a":"x","b":"y"}`)},
			want: []string{p + "properties[spec].properties[x].default: Invalid value:", "must not have unknown fields"}},
		{name: "default of an object field invalid", prop: apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"a": {Type: "integer", Maximum: ptr.To(2.0)}}, Default: def(`{"a":5}`)},
			want: []string{p + "properties[spec].properties[x].default.a: Invalid value: 5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := crdtest.ValidCRD()
			root := c.Spec.Versions[0].Schema.OpenAPIV3Schema
			spec := root.Properties["spec"]
			spec.Properties["x"] = tc.prop
			root.Properties["spec"] = spec
			got := validateCRD(c, nil).ToAggregate()
			if len(tc.want) == 0 {
				if got != nil {
					t.Fatalf("got %v, want valid", got)
				}
				return
			}
			if got == nil {
				t.Fatalf("got valid, want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(got.Error(), w) {
					t.Fatalf("got %v, want it to contain %q", got, w)
				}
			}
		})
	}
}

// A stored CRD whose schema predates the checks can still be updated
// while that schema stays the same.
func TestSchemaChecksSkipUnchangedSchemas(t *testing.T) {
	old := crdtest.ValidCRD()
	root := old.Spec.Versions[0].Schema.OpenAPIV3Schema
	spec := root.Properties["spec"]
	spec.Properties["x"] = apiextensionsv1.JSONSchemaProps{}
	root.Properties["spec"] = spec
	upd := old.DeepCopy()
	upd.Spec.Names.ShortNames = []string{"wd"}
	if errs := validateCRDUpdate(upd, old, nil); len(errs) > 0 {
		t.Fatalf("update keeping the schema: got %v, want valid", errs)
	}
	upd.Spec.Versions[0].Schema.OpenAPIV3Schema.Description = "changed"
	if errs := validateCRDUpdate(upd, old, nil); len(errs) == 0 {
		t.Fatal("update changing the schema: got valid, want the type error")
	}
}
