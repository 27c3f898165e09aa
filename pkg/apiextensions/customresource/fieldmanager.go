package customresource

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/apiextensions/conversion"
	structuralschema "github.com/kapi-dev/kapi/pkg/apiextensions/schema"
	"github.com/kapi-dev/kapi/pkg/endpoints/fieldmanager"
	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
)

// Defaulter applies the schema defaults of each version to custom
// resources of it.
type Defaulter map[string]*apiextensionsv1.JSONSchemaProps // by version

// Default implements runtime.ObjectDefaulter.
func (d Defaulter) Default(obj runtime.Object) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	if s := d[u.GroupVersionKind().Version]; s != nil {
		structuralschema.ApplyDefaults(u.Object, s)
	}
}

// NewDefaulter returns the defaulter of crd's versions.
func NewDefaulter(crd *apiextensionsv1.CustomResourceDefinition) Defaulter {
	d := Defaulter{}
	for _, v := range crd.Spec.Versions {
		if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			d[v.Name] = v.Schema.OpenAPIV3Schema
		}
	}
	return d
}

// FieldManagement is what the field managers of one CRD's kinds are
// built from.
type FieldManagement struct {
	// TypeConverter holds the types of every version (NewTypeConverter).
	TypeConverter managedfields.TypeConverter
	// Defaulter applies each version's defaults (NewDefaulter).
	Defaulter Defaulter
	// Converter converts between the CRD's versions; nil: strategy None.
	Converter conversion.Converter
}

// FieldManagers returns the installer's field-manager factory of one
// group-version of custom resources (the CRDs served there, by kind):
// their main resource and /status get upstream's custom-resource field
// manager on their schemas, /scale (autoscaling/v1 Scale) one on deduced
// types.
func FieldManagers(kinds map[schema.GroupVersionKind]FieldManagement) func(schema.GroupVersionKind, string, map[fieldpath.APIVersion]*fieldpath.Set) (handlers.FieldManager, error) {
	return func(kind schema.GroupVersionKind, sub string, reset map[fieldpath.APIVersion]*fieldpath.Set) (handlers.FieldManager, error) {
		if sub == "scale" {
			return fieldmanager.New(fieldmanager.Config{
				Kind:           kind,
				Subresource:    sub,
				TypeConverter:  managedfields.NewDeducedTypeConverter(),
				CustomResource: true,
			})
		}
		c, ok := kinds[kind]
		if !ok {
			return nil, fmt.Errorf("no custom resource definition serves %s", kind)
		}
		m, err := fieldmanager.New(fieldmanager.Config{
			Kind:           kind,
			Subresource:    sub,
			ResetFields:    reset,
			TypeConverter:  c.TypeConverter,
			Convertor:      Convertor{Converter: c.Converter},
			ReadConvertor:  ReadConvertor{Convertor{Converter: c.Converter}},
			Defaulter:      c.Defaulter,
			Creater:        Creater{},
			CustomResource: true,
		})
		if err != nil {
			return nil, err
		}
		return m, nil
	}
}
