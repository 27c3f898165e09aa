package crdtest

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
)

// SpecWithRules is a schema whose spec carries rules, with an integer
// list and a string map below it.
func SpecWithRules(rules ...apiextensionsv1.ValidationRule) *apiextensionsv1.JSONSchemaProps {
	return &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {
				Type:         "object",
				XValidations: rules,
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"replicas":    {Type: "integer"},
					"maxReplicas": {Type: "integer"},
					"name":        {Type: "string"},
					"list":        {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "integer"}}},
					"labels": {Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{
						Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"},
					}},
				},
			},
		},
	}
}

// TypedSchema is a schema whose spec has a property of each kind CEL
// types differently, and carries rules.
func TypedSchema(rules ...apiextensionsv1.ValidationRule) *apiextensionsv1.JSONSchemaProps {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	item := apiextensionsv1.JSONSchemaProps{Type: "object", Required: []string{"name"}, Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"name": str, "value": str,
	}}
	return &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {
				Type:         "object",
				XValidations: rules,
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"name":      str,
					"replicas":  {Type: "integer"},
					"ratio":     {Type: "number"},
					"enabled":   {Type: "boolean"},
					"ios":       {XIntOrString: true},
					"when":      {Type: "string", Format: "date-time"},
					"day":       {Type: "string", Format: "date"},
					"timeout":   {Type: "string", Format: "duration"},
					"data":      {Type: "string", Format: "byte"},
					"x-y":       str,
					"namespace": str,
					"a.b":       str,
					"a b":       str,
					"list":      {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "integer"}}},
					"tags":      {Type: "array", MaxItems: ptr.To[int64](10), Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string", MaxLength: ptr.To[int64](20)}}},
					"labels": {Type: "object", MaxProperties: ptr.To[int64](10), AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{
						Schema: &apiextensionsv1.JSONSchemaProps{Type: "string", MaxLength: ptr.To[int64](20)},
					}},
					"entries": {Type: "array", XListType: ptr.To("map"), XListMapKeys: []string{"name"}, MaxItems: ptr.To[int64](10),
						Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &item}},
					"atomics": {Type: "array", MaxItems: ptr.To[int64](10), Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &item}},
					"set": {Type: "array", XListType: ptr.To("set"), MaxItems: ptr.To[int64](10),
						Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string", MaxLength: ptr.To[int64](10)}}},
					"free": {Type: "object", XPreserveUnknownFields: ptr.To(true)},
				},
			},
		},
	}
}

// WithItemRule adds a rule to the items of spec's list property.
func WithItemRule(s *apiextensionsv1.JSONSchemaProps, list string, r apiextensionsv1.ValidationRule) *apiextensionsv1.JSONSchemaProps {
	spec := s.Properties["spec"]
	l := spec.Properties[list]
	it := *l.Items.Schema
	it.XValidations = append(it.XValidations, r)
	l.Items = &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &it}
	spec.Properties[list] = l
	s.Properties["spec"] = spec
	return s
}

// ApplySchema has the merge semantics server-side apply honours: a list
// map keyed by name, a set, an atomic map, a granular map, an
// int-or-string and a preserve-unknown-fields subtree.
func ApplySchema() *apiextensionsv1.JSONSchemaProps {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	return &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {
				Type: "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"replicas": {Type: "integer"},
					"ports": {
						Type:         "array",
						XListType:    ptr.To("map"),
						XListMapKeys: []string{"name"},
						Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
							Type:     "object",
							Required: []string{"name"},
							Properties: map[string]apiextensionsv1.JSONSchemaProps{
								"name": str,
								"port": {Type: "integer"},
							},
						}},
					},
					"tags":     {Type: "array", XListType: ptr.To("set"), Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &str}},
					"args":     {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &str}},
					"selector": {Type: "object", XMapType: ptr.To("atomic"), AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &str}},
					"labels":   {Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &str}},
					"value":    {XIntOrString: true},
					"extra":    {Type: "object", XPreserveUnknownFields: ptr.To(true)},
					"template": {Type: "object", XEmbeddedResource: true, XPreserveUnknownFields: ptr.To(true)},
				},
			},
			"status": {
				Type:       "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{"ready": {Type: "boolean"}, "phase": str},
			},
		},
	}
}

// ApplyCRD serves appliers.apply.example.com with ApplySchema.
func ApplyCRD() *apiextensionsv1.CustomResourceDefinition {
	crd := NewCRD("apply.example.com", "appliers", "Applier", apiextensionsv1.NamespaceScoped)
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema = ApplySchema()
	crd.Spec.Versions[0].AdditionalPrinterColumns = nil
	return crd
}
