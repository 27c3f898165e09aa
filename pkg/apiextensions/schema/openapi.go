package schema

import (
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// ToOpenAPI converts a CRD schema into a kube-openapi schema: the
// JSON forms agree (vendor extensions become Extensions), and
// x-kubernetes-int-or-string becomes type [integer, string] as upstream
// does for validation.
func ToOpenAPI(in *apiextensionsv1.JSONSchemaProps) (*spec.Schema, error) {
	if in == nil {
		return nil, nil
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	out := &spec.Schema{}
	if err := json.Unmarshal(b, out); err != nil {
		return nil, fmt.Errorf("decode schema: %w", err)
	}
	Walk(out, func(s *spec.Schema) {
		if v, ok := s.Extensions.GetBool("x-kubernetes-int-or-string"); ok && v {
			s.Type = spec.StringOrArray{"integer", "string"}
		}
	})
	return out, nil
}

// Walk calls fn on s and every schema below it.
func Walk(s *spec.Schema, fn func(*spec.Schema)) {
	if s == nil {
		return
	}
	fn(s)
	walkMap := func(m map[string]spec.Schema) {
		for k, v := range m {
			Walk(&v, fn)
			m[k] = v
		}
	}
	walkMap(s.Properties)
	walkMap(s.PatternProperties)
	walkMap(s.Definitions)
	for _, l := range [][]spec.Schema{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range l {
			Walk(&l[i], fn)
		}
	}
	Walk(s.Not, fn)
	if s.Items != nil {
		Walk(s.Items.Schema, fn)
		for i := range s.Items.Schemas {
			Walk(&s.Items.Schemas[i], fn)
		}
	}
	if s.AdditionalProperties != nil {
		Walk(s.AdditionalProperties.Schema, fn)
	}
	if s.AdditionalItems != nil {
		Walk(s.AdditionalItems.Schema, fn)
	}
}
