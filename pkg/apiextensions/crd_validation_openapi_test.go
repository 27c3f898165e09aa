package apiextensions

import (
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

// TestValidateCRDOpenAPIChecks: a schema that breaks each of upstream's
// OpenAPI checks (ValidateCustomResourceDefinitionOpenAPISchema), and the
// errors kube-apiserver v1.37.2 answered when this CRD was created on it
// (hack/build-reference.sh), compared as sets: upstream walks properties
// in map order. One version: the paths are spec.validation's.
func TestValidateCRDOpenAPIChecks(t *testing.T) {
	str := func(extra func(*apiextensionsv1.JSONSchemaProps)) apiextensionsv1.JSONSchemaProps {
		s := apiextensionsv1.JSONSchemaProps{Type: "string"}
		if extra != nil {
			extra(&s)
		}
		return s
	}
	items := func(s apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaPropsOrArray {
		return &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &s}
	}
	reason := apiextensionsv1.FieldValueErrorReason("Weird")
	crd := crdtest.ValidCRD()
	crd.Spec.Versions[0].Subresources = nil
	crd.Spec.Versions[0].AdditionalPrinterColumns = nil
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema = &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"metadata": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"name": {Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"x"`)}},
			}},
			"spec": {
				Type: "object",
				XValidations: apiextensionsv1.ValidationRules{
					{Rule: "self.a == 1", Message: " "},
					{Rule: "true", Reason: &reason},
				},
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"a": str(func(s *apiextensionsv1.JSONSchemaProps) { s.XListType = ptr.To("set") }),
					"b": {Type: "array", UniqueItems: true, Items: items(str(nil))},
					"c": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"x": str(nil)},
						AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}},
					"d": {Type: "array", XListType: ptr.To("map"), XListMapKeys: []string{"k", "nm", "zz", "nm"},
						Items: items(apiextensionsv1.JSONSchemaProps{Type: "object", Nullable: true, Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"k":  {Type: "object"},
							"nm": str(func(s *apiextensionsv1.JSONSchemaProps) { s.Nullable = true }),
						}})},
					"e": {Type: "array", XListType: ptr.To("set"), Items: items(apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"q": str(nil)}})},
					"f": str(func(s *apiextensionsv1.JSONSchemaProps) {
						s.XMapType = ptr.To("granular")
						s.XPreserveUnknownFields = ptr.To(false)
					}),
					"g": {Type: "array", XListMapKeys: []string{"a"}, Items: items(str(nil))},
					"h": {Type: "array", XListType: ptr.To("sorted"), Items: items(str(nil))},
				},
			},
		},
	}
	const p = "spec.validation.openAPIV3Schema"
	want := []string{
		p + `.properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata`,
		p + `.properties[spec].properties[g].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty`,
		p + `.properties[spec].properties[h].x-kubernetes-list-type: Unsupported value: "sorted": supported values: "atomic", "set", "map"`,
		p + `.properties[spec].properties[a].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified`,
		p + `.properties[spec].properties[b].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
		p + `.properties[spec].properties[c].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`,
		p + `.properties[spec].properties[d].items.properties[k].type: Invalid value: "object": must be a scalar type if parent array's x-kubernetes-list-type is map`,
		p + `.properties[spec].properties[d].x-kubernetes-list-map-keys: Invalid value: ["k","nm","zz","nm"]: entries must all be names of item properties`,
		p + `.properties[spec].properties[d].x-kubernetes-list-map-keys: Invalid value: ["k","nm","zz","nm"]: must not contain duplicate entries`,
		p + `.properties[spec].properties[d].items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is map`,
		p + `.properties[spec].properties[d].items.properties[k].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
		p + `.properties[spec].properties[d].items.properties[nm].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
		p + `.properties[spec].properties[d].items.properties[nm].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable`,
		p + `.properties[spec].properties[e].items.x-kubernetes-map-type: Invalid value: null: must be atomic as item of a list with x-kubernetes-list-type=set`,
		p + `.properties[spec].properties[f].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined`,
		p + `.properties[spec].properties[f].type: Invalid value: "string": must be object if x-kubernetes-map-type is specified`,
		p + `.properties[spec].x-kubernetes-validations[0].message: Invalid value: " ": must be non-empty if specified`,
		p + `.properties[spec].x-kubernetes-validations[1].reason: Unsupported value: "Weird": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
	}
	var got []string
	for _, e := range validateCRD(crd, nil) {
		got = append(got, e.Error())
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}
