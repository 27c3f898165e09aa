package schema

import (
	"encoding/json"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Items returns the schema of an array's items, or nil.
func Items(s *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
	if s == nil || s.Items == nil {
		return nil
	}
	return s.Items.Schema
}

// AdditionalProperties returns the schema of a map's values, or nil.
func AdditionalProperties(s *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
	if s == nil || s.AdditionalProperties == nil {
		return nil
	}
	return s.AdditionalProperties.Schema
}

// preservesUnknown reports whether s keeps fields it does not specify:
// x-kubernetes-preserve-unknown-fields, or additionalProperties: true.
func preservesUnknown(s *apiextensionsv1.JSONSchemaProps) bool {
	if s == nil {
		return false
	}
	if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields {
		return true
	}
	return s.AdditionalProperties != nil && s.AdditionalProperties.Allows && s.AdditionalProperties.Schema == nil
}

// ListMapKey is the identity of an item of a list-type=map list whose
// x-kubernetes-list-map-keys are keys: its key values, JSON-encoded; ""
// without keys or for an item that is not an object. Items correlate with
// old items by it (validation ratcheting, CEL transition rules).
func ListMapKey(item any, keys []string) string {
	m, ok := item.(map[string]any)
	if !ok || len(keys) == 0 {
		return ""
	}
	vals := make([]any, len(keys))
	for i, k := range keys {
		vals[i] = m[k]
	}
	b, err := json.Marshal(vals)
	if err != nil {
		return ""
	}
	return string(b)
}
