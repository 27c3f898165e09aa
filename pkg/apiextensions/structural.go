package apiextensions

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// itemsSchema returns the schema of an array's items, or nil.
func itemsSchema(s *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
	if s == nil || s.Items == nil {
		return nil
	}
	return s.Items.Schema
}

// additionalSchema returns the schema of a map's values, or nil.
func additionalSchema(s *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
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
