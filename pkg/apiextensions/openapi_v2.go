package apiextensions

import (
	"encoding/json"
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	structuralschema "github.com/kapi-dev/kapi/pkg/apiextensions/schema"
)

// v2Entries are the paths and definitions one group-version of custom
// resources put into the OpenAPI v2 document.
type v2Entries struct {
	paths, definitions []string
}

// setV2 publishes the v2 paths and definitions of gv's crds, replacing
// (and removing what is gone of) those published before.
func (o *crOpenAPI) setV2(gv schema.GroupVersion, crds []*apiextensionsv1.CustomResourceDefinition) error {
	paths := map[string]any{}
	defs := map[string]any{}
	for _, crd := range crds {
		if err := addCRDV2(gv, crd, paths, defs); err != nil {
			return fmt.Errorf("%s: %w", crd.Name, err)
		}
	}
	o.replaceV2(gv, paths, defs)
	return nil
}

// removeV2 removes what gv published in the v2 document.
func (o *crOpenAPI) removeV2(gv schema.GroupVersion) { o.replaceV2(gv, nil, nil) }

func (o *crOpenAPI) replaceV2(gv schema.GroupVersion, paths, defs map[string]any) {
	old := o.v2[gv]
	next := v2Entries{}
	for k := range paths {
		next.paths = append(next.paths, k)
	}
	for k := range defs {
		next.definitions = append(next.definitions, k)
	}
	var gonePaths, goneDefs []string
	for _, p := range old.paths {
		if _, ok := paths[p]; !ok {
			gonePaths = append(gonePaths, p)
		}
	}
	for _, d := range old.definitions {
		if _, ok := defs[d]; !ok {
			goneDefs = append(goneDefs, d)
		}
	}
	if len(gonePaths) > 0 || len(goneDefs) > 0 {
		o.api.RemoveV2(gonePaths, goneDefs)
	}
	if len(paths) > 0 || len(defs) > 0 {
		o.api.MergeV2(paths, defs)
	}
	if len(next.paths) == 0 && len(next.definitions) == 0 {
		delete(o.v2, gv)
		return
	}
	o.v2[gv] = next
}

// addCRDV2 adds the v2 definitions (kind and list, named as upstream:
// "com.example.v1.Widget") and read paths of crd's version gv.Version.
func addCRDV2(gv schema.GroupVersion, crd *apiextensionsv1.CustomResourceDefinition, paths, defs map[string]any) error {
	version := crdVersion(crd, gv.Version)
	if version == nil {
		return nil
	}
	names := crd.Status.AcceptedNames
	var in *apiextensionsv1.JSONSchemaProps
	if version.Schema != nil {
		in = version.Schema.OpenAPIV3Schema
	}
	item, err := v2Schema(in)
	if err != nil {
		return err
	}
	// In v2 a $ref may carry a description beside it.
	itemName, listName, list := kindDefinitions(gv, names, item, func(name, desc string) spec.Schema {
		s := spec.RefSchema("#/definitions/" + name)
		s.Description = desc
		return *s
	})
	defs[itemName] = item
	defs[listName] = list

	root := "/" + gvPath(gv)
	collection := root + "/" + names.Plural
	if crd.Spec.Scope == apiextensionsv1.NamespaceScoped {
		collection = root + "/namespaces/{namespace}/" + names.Plural
	}
	for _, p := range []struct{ path, action, kind, def string }{
		{collection, "list", names.ListKind, listName},
		{collection + "/{name}", "get", names.Kind, itemName},
	} {
		op := &spec.Operation{
			OperationProps: spec.OperationProps{
				ID:       p.action + names.Kind,
				Produces: []string{"application/json", "application/yaml"},
				Schemes:  []string{"https"},
				Responses: &spec.Responses{ResponsesProps: spec.ResponsesProps{StatusCodeResponses: map[int]spec.Response{
					200: {ResponseProps: spec.ResponseProps{Description: "OK", Schema: spec.RefSchema("#/definitions/" + p.def)}},
					401: {ResponseProps: spec.ResponseProps{Description: "Unauthorized"}},
				}}},
			},
			VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{
				"x-kubernetes-action":             p.action,
				"x-kubernetes-group-version-kind": map[string]any{"group": gv.Group, "version": gv.Version, "kind": p.kind},
			}},
		}
		paths[p.path] = &spec.PathItem{PathItemProps: spec.PathItemProps{Get: op}}
	}
	return nil
}

// v2Schema converts a version's schema into an OpenAPI v2 one as upstream
// does for kubectl: no allOf, anyOf, oneOf or not; nullable and
// x-kubernetes-int-or-string values untyped; nothing below
// x-kubernetes-preserve-unknown-fields; arrays without items untyped;
// nullable properties never required.
func v2Schema(in *apiextensionsv1.JSONSchemaProps) (*spec.Schema, error) {
	out := &spec.Schema{}
	if in == nil {
		return out, nil
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return nil, fmt.Errorf("decode schema: %w", err)
	}
	structuralschema.Walk(out, func(s *spec.Schema) {
		s.AllOf, s.AnyOf, s.OneOf, s.Not = nil, nil, nil, nil
		if v, ok := s.Extensions.GetBool("x-kubernetes-int-or-string"); ok && v {
			s.Type = nil
		}
		if s.Nullable {
			s.Type = nil
			s.Nullable = false
			s.Items = nil
			s.Properties = nil
		}
		if v, ok := s.Extensions.GetBool("x-kubernetes-preserve-unknown-fields"); ok && v {
			s.Items = nil
			s.Properties = nil
		}
		if s.Items == nil && len(s.Type) == 1 && s.Type[0] == "array" {
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
