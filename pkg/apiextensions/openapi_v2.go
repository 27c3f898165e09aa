package apiextensions

import (
	"encoding/json"
	"fmt"
	"slices"

	structuralschema "github.com/kapi-dev/kapi/pkg/apiextensions/schema"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kapi-dev/kapi/pkg/openapi"
)

// partV2 returns gv's part of the v2 document: its operations (paths),
// the definitions of its crds' kinds and the shared parameters the paths
// reference (apiextensions-apiserver's builder shares them too).
func partV2(gv schema.GroupVersion, crds []*apiextensionsv1.CustomResourceDefinition, paths *openapi.Paths) (map[string]any, map[string]any, map[string]any, error) {
	ps, prs, err := paths.V2WithSharedParameters()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("openapi v2 for %s: %w", gv, err)
	}
	v2Paths := make(map[string]any, len(ps))
	for k, v := range ps {
		v2Paths[k] = v
	}
	params := make(map[string]any, len(prs))
	for k, v := range prs {
		params[k] = v
	}
	defs := map[string]any{}
	for _, crd := range crds {
		if err := addCRDV2(gv, crd, defs); err != nil {
			return nil, nil, nil, fmt.Errorf("openapi v2 for %s: %s: %w", gv, crd.Name, err)
		}
	}
	return v2Paths, defs, params, nil
}

// addCRDV2 adds the v2 definitions (kind and list, named as upstream:
// "com.example.v1.Widget") of crd's version gv.Version.
func addCRDV2(gv schema.GroupVersion, crd *apiextensionsv1.CustomResourceDefinition, defs map[string]any) error {
	version := crdVersion(crd, gv.Version)
	if version == nil {
		return nil
	}
	var in *apiextensionsv1.JSONSchemaProps
	if version.Schema != nil {
		in = version.Schema.OpenAPIV3Schema
	}
	item, err := v2Schema(in)
	if err != nil {
		return err
	}
	// In v2 a $ref may carry a description beside it.
	ref := func(name, desc string) spec.Schema {
		s := spec.RefSchema("#/definitions/" + name)
		s.Description = desc
		return *s
	}
	itemName, listName, item, list := kindDefinitions(gv, crd, item, true, ref)
	addEmbeddedProperties(item, true, ref)
	defs[itemName] = item
	defs[listName] = list
	return nil
}

// v2Schema converts a version's schema into an OpenAPI v2 one as upstream
// does for kubectl (ToStructuralOpenAPIV2): no allOf, anyOf, oneOf or
// not; nullable and x-kubernetes-int-or-string values untyped; nothing
// below x-kubernetes-preserve-unknown-fields, and such objects untyped;
// arrays without items untyped; nullable properties never required. A
// version without a schema has none (nil).
func v2Schema(in *apiextensionsv1.JSONSchemaProps) (*spec.Schema, error) {
	if in == nil {
		return nil, nil
	}
	out := &spec.Schema{}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return nil, fmt.Errorf("decode schema: %w", err)
	}
	structuralschema.Walk(out, func(s *spec.Schema) {
		s.AllOf, s.AnyOf, s.OneOf, s.Not = nil, nil, nil, nil
		// Upstream prunes the defaults of the CRDs' v2 definitions to
		// merge them with the built-in ones, which have none
		// (apiextensions-apiserver v0.37 pkg/controller/openapi
		// controller.go: handler.PruneDefaults).
		s.Default = nil
		if v, ok := s.Extensions.GetBool("x-kubernetes-int-or-string"); ok && v {
			s.Type = nil
		}
		if s.Nullable {
			s.Type = nil
			s.Nullable = false
			s.Items = nil
			s.Properties = nil
		}
		preserve, _ := s.Extensions.GetBool("x-kubernetes-preserve-unknown-fields")
		if preserve {
			s.Items = nil
			s.Properties = nil
		}
		if s.Items == nil && len(s.Type) == 1 && s.Type[0] == "array" {
			s.Type = nil
		}
		if preserve && len(s.Type) == 1 && s.Type[0] == "object" {
			s.Type = nil
		}
		for name, p := range s.Properties {
			if p.Nullable {
				s.Required = slices.DeleteFunc(s.Required, func(r string) bool { return r == name })
			}
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil && s.AdditionalProperties.Schema.Nullable {
			s.Required = nil
		}
		if len(s.Required) == 0 {
			s.Required = nil
		}
	})
	return out, nil
}
