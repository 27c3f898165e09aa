package schema

import (
	"encoding/json"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestSchemaValidation(t *testing.T) {
	v, err := NewValidator(&apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"port":   {XIntOrString: true},
				"name":   {Type: "string", MaxLength: ptrInt64(3), Pattern: "^[a-z]+$"},
				"items":  {Type: "array", MaxItems: ptrInt64(1), Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "integer"}}},
				"opt":    {Type: "string", Nullable: true},
				"labels": {Type: "object", MaxProperties: ptrInt64(1), AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}},
				"either": {OneOf: []apiextensionsv1.JSONSchemaProps{{Required: []string{"a"}}, {Required: []string{"b"}}}, Type: "object"},
			}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		obj  string
		want []string
	}{
		{name: "valid", obj: `{"spec":{"port":"http","name":"abc","items":[1],"opt":null,"either":{"a":1}}}`},
		{name: "int or string", obj: `{"spec":{"port":80}}`},
		{name: "int or string wrong", obj: `{"spec":{"port":true}}`, want: []string{"spec.port: Invalid value"}},
		{name: "too long", obj: `{"spec":{"name":"abcd"}}`, want: []string{"spec.name: Too long"}},
		{name: "pattern", obj: `{"spec":{"name":"A"}}`, want: []string{"spec.name: Invalid value", "should match"}},
		{name: "too many", obj: `{"spec":{"items":[1,2]}}`, want: []string{"spec.items: Too many: 2: must have at most 1 item"}},
		// kube-apiserver v1.37.2 answered the same for a maxProperties of 2
		// and three properties ("Too many: 3: must have at most 2 items").
		{name: "too many properties", obj: `{"spec":{"labels":{"a":"x","b":"y"}}}`, want: []string{"spec.labels: Too many: 2: must have at most 1 item"}},
		{name: "item type", obj: `{"spec":{"items":["x"]}}`, want: []string{"spec.items[0]: Invalid value"}},
		{name: "oneOf", obj: `{"spec":{"either":{"a":1,"b":2}}}`, want: []string{`"spec.either" must validate one and only one schema (oneOf)`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var obj map[string]any
			if err := json.Unmarshal([]byte(tc.obj), &obj); err != nil {
				t.Fatal(err)
			}
			errs := v.Validate(obj)
			if len(tc.want) == 0 {
				if len(errs) > 0 {
					t.Fatalf("got %v, want valid", errs.ToAggregate())
				}
				return
			}
			got := errs.ToAggregate()
			if got == nil {
				t.Fatalf("got valid, want %v", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(got.Error(), w) {
					t.Errorf("got %q, want it to contain %q", got, w)
				}
			}
		})
	}
}

func ptrInt64(v int64) *int64 { return &v }

// FuzzSchemaValidation feeds arbitrary schemas and objects to the
// conversion and the validator: they must not panic.
func FuzzSchemaValidation(f *testing.F) {
	f.Add(`{"type":"object","properties":{"spec":{"type":"object","required":["a"]}}}`, `{"spec":{}}`)
	f.Add(`{"type":"object","x-kubernetes-int-or-string":true}`, `{"a":[1,2,{"b":null}]}`)
	f.Add(`{"type":"array","items":{"type":"string","pattern":"^a"},"maxItems":2}`, `["a","b","c"]`)
	f.Add(`{"anyOf":[{"type":"integer"},{"type":"string","enum":["x"]}],"not":{"type":"boolean"}}`, `{"spec":1.5}`)
	f.Fuzz(func(t *testing.T, schemaJSON, objJSON string) {
		var props apiextensionsv1.JSONSchemaProps
		if err := json.Unmarshal([]byte(schemaJSON), &props); err != nil {
			return
		}
		v, err := NewValidator(&props)
		if err != nil {
			return
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(objJSON), &obj); err != nil {
			return
		}
		_ = v.Validate(obj)
	})
}
