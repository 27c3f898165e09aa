package crdtest

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// WidgetSchema is a small structural schema: spec.size an integer 1..10,
// spec.color one of red/blue, spec.name required.
func WidgetSchema() *apiextensionsv1.JSONSchemaProps {
	return &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {
				Type:     "object",
				Required: []string{"name"},
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"name":  {Type: "string"},
					"size":  {Type: "integer", Minimum: ptr.To(1.0), Maximum: ptr.To(10.0)},
					"color": {Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"red"`)}, {Raw: []byte(`"blue"`)}}},
				},
			},
			"status": {
				Type:       "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{"ready": {Type: "boolean"}},
			},
		},
	}
}

// NewCRD returns a CRD of kind in group, served (and stored) as v1, with
// the status subresource and a printer column.
func NewCRD(group, plural, kind string, scope apiextensionsv1.ResourceScope) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Scope: scope,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: plural, Kind: kind, ShortNames: []string{plural[:2]}, Categories: []string{"all"},
			},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: WidgetSchema()},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
					{Name: "Size", Type: "integer", JSONPath: ".spec.size"},
				},
			}},
		},
	}
}

// ValidCRD is a defaulted, valid CRD (widgets.example.com) to break in
// one way per case. It has the defaults the server gives a CRD (those of
// apiextensions.k8s.io/v1: conversion strategy None, singular and
// listKind from kind).
func ValidCRD() *apiextensionsv1.CustomResourceDefinition {
	c := NewCRD("example.com", "widgets", "Widget", apiextensionsv1.NamespaceScoped)
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(c)
	return c
}
