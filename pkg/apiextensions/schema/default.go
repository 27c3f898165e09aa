package schema

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// ApplyDefaults sets, recursively (in objects, array items and
// additionalProperties values), the schema's default of each property
// that is absent, or null when the property is not nullable. Defaults are
// deep copies (decoded afresh each time). A nil s does nothing.
func ApplyDefaults(x any, s *apiextensionsv1.JSONSchemaProps) {
	if s == nil {
		return
	}
	switch x := x.(type) {
	case map[string]any:
		for k, p := range s.Properties {
			if p.Default == nil {
				continue
			}
			v, ok := x[k]
			if ok && (v != nil || p.Nullable) {
				continue
			}
			var d any
			if err := utiljson.Unmarshal(p.Default.Raw, &d); err != nil {
				// Checked when the CRD was written: skip a bad one.
				continue
			}
			x[k] = d // freshly decoded: a deep copy
		}
		for k, v := range x {
			if ps, ok := propertySchema(s, k); ok {
				ApplyDefaults(v, ps)
			} else if add := AdditionalProperties(s); add != nil {
				ApplyDefaults(v, add)
			}
		}
	case []any:
		items := Items(s)
		for _, v := range x {
			ApplyDefaults(v, items)
		}
	}
}
