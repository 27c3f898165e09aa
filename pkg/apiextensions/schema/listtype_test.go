package schema

import (
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
)

// TestValidateListSetsAndMaps: the rules of upstream's
// structurallisttype.ValidateListSetsAndMaps (apiextensions-apiserver
// v0.37 pkg/apiserver/schema/listtype/validation.go): the second
// occurrence is a Duplicate (of the value, or of the item's keys), a map's
// items must be objects, a missing key counts as a value of its own
// (values rendered as field.Error renders them).
func TestValidateListSetsAndMaps(t *testing.T) {
	obj := func(props map[string]apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
		return &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props}
	}
	item := obj(map[string]apiextensionsv1.JSONSchemaProps{"name": {Type: "string"}, "port": {Type: "integer"}})
	s := obj(map[string]apiextensionsv1.JSONSchemaProps{"spec": *obj(map[string]apiextensionsv1.JSONSchemaProps{
		"set":    {Type: "array", XListType: ptr.To("set"), Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{}}},
		"one":    {Type: "array", XListType: ptr.To("map"), XListMapKeys: []string{"name"}, Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: item}},
		"two":    {Type: "array", XListType: ptr.To("map"), XListMapKeys: []string{"name", "port"}, Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: item}},
		"nested": {Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextensionsv1.JSONSchemaProps{Type: "array", XListType: ptr.To("set"), Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "integer"}}}}},
	})})
	for _, tc := range []struct{ name, in string }{
		{"valid", `{"spec":{"set":[1,"1",[1],{"a":1}],"one":[{"name":"a"},{"name":"b"}],"two":[{"name":"a","port":1},{"name":"a","port":2}]}}`},
	} {
		if errs := ValidateListSetsAndMaps(decode(t, tc.in), s); len(errs) != 0 {
			t.Errorf("%s: got %v, want none", tc.name, errs)
		}
	}
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"set: the second occurrence only", `{"spec":{"set":["a","a","a",{"k":1},{"k":1},[1],[1]]}}`,
			[]string{`spec.set[1]: Duplicate value: "a"`, `spec.set[4]: Duplicate value: {"k":1}`, `spec.set[6]: Duplicate value: [1]`}},
		{"map with one key", `{"spec":{"one":[{"name":"a"},{"name":"a","port":1},{"port":2},{"port":3}]}}`,
			[]string{`spec.one[1]: Duplicate value: {"name":"a"}`, `spec.one[3]: Duplicate value: {}`}},
		{"map with two keys", `{"spec":{"two":[{"name":"a","port":1},{"port":1,"name":"a"},{},{}]}}`,
			[]string{`spec.two[1]: Duplicate value: {"name":"a","port":1}`, `spec.two[3]: Duplicate value: {}`}},
		{"map items must be objects", `{"spec":{"one":[{"name":"a"},"x"]}}`,
			[]string{`spec.one[1]: Invalid value: "x": must be an object for an array of list-type map`}},
		{"additionalProperties, sorted", `{"spec":{"nested":{"b":[1,1],"a":[2,2]}}}`,
			[]string{`spec.nested[a][1]: Duplicate value: 2`, `spec.nested[b][1]: Duplicate value: 1`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range ValidateListSetsAndMaps(decode(t, tc.in), s) {
				got = append(got, e.Error())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
