package apiextensions

import (
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	structuralschema "github.com/kapi-dev/kapi/pkg/apiextensions/schema"
	"github.com/kapi-dev/kapi/pkg/openapi"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/version"
)

const (
	objectMetaName = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	listMetaName   = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
)

// crOpenAPI publishes OpenAPI v3 documents: one per group-version of
// custom resources (each kind's schema with apiVersion, kind and metadata,
// its list, and read paths naming x-kubernetes-group-version-kind, which
// kubectl explain looks for), and the same definitions and paths in the
// v2 document (schemas made v2-compatible as upstream), removed when the
// CRD goes. A nil crOpenAPI publishes nothing.
type crOpenAPI struct {
	api *server.OpenAPI
	// meta are the ObjectMeta and ListMeta schemas and what they reference.
	meta map[string]*spec.Schema
	// v2 is what each group-version put into the v2 document (used
	// under the crServer's lock).
	v2 map[schema.GroupVersion]v2Entries
}

func newCROpenAPI(api *server.OpenAPI, defs *openapi.Definitions) (*crOpenAPI, error) {
	if api == nil {
		return nil, nil
	}
	meta, err := defs.SchemasForNames(objectMetaName, listMetaName)
	if err != nil {
		return nil, fmt.Errorf("openapi: metadata schemas: %w", err)
	}
	return &crOpenAPI{api: api, meta: meta, v2: map[schema.GroupVersion]v2Entries{}}, nil
}

func gvPath(gv schema.GroupVersion) string { return "apis/" + gv.Group + "/" + gv.Version }

func (o *crOpenAPI) remove(gv schema.GroupVersion) {
	if o == nil {
		return
	}
	o.api.SetV3(gvPath(gv), nil)
	o.removeV2(gv)
}

// set publishes the document of gv for crds (each serving gv).
func (o *crOpenAPI) set(gv schema.GroupVersion, crds []*apiextensionsv1.CustomResourceDefinition) error {
	if o == nil {
		return nil
	}
	schemas := make(map[string]*spec.Schema, len(o.meta)+2*len(crds))
	for k, v := range o.meta {
		schemas[k] = v
	}
	paths := map[string]*spec3.Path{}
	for _, crd := range crds {
		if err := o.addCRD(gv, crd, schemas, paths); err != nil {
			return fmt.Errorf("%s: %w", crd.Name, err)
		}
	}
	info := &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes CRD Swagger", Version: "v0.1.0"}}
	doc, err := json.Marshal(openapi.NewDocumentV3(info, paths, schemas))
	if err != nil {
		return fmt.Errorf("encode openapi v3 for %s: %w", gv, err)
	}
	o.api.SetV3(gvPath(gv), doc)
	return o.setV2(gv, crds)
}

func (o *crOpenAPI) addCRD(gv schema.GroupVersion, crd *apiextensionsv1.CustomResourceDefinition, schemas map[string]*spec.Schema, paths map[string]*spec3.Path) error {
	version := crdVersion(crd, gv.Version)
	if version == nil {
		return nil
	}
	names := crd.Status.AcceptedNames
	item := &spec.Schema{}
	if version.Schema != nil && version.Schema.OpenAPIV3Schema != nil {
		s, err := structuralschema.ToOpenAPI(version.Schema.OpenAPIV3Schema)
		if err != nil {
			return err
		}
		item = s
	}
	itemName, listName, list := kindDefinitions(gv, names, item, func(name, desc string) spec.Schema { return *refSchema(name, desc) })
	schemas[itemName] = item
	schemas[listName] = list

	root := "/" + gvPath(gv)
	collection := root + "/" + names.Plural
	if crd.Spec.Scope == apiextensionsv1.NamespaceScoped {
		collection = root + "/namespaces/{namespace}/" + names.Plural
	}
	for _, p := range []struct{ path, action, kind, def string }{
		{collection, "list", names.ListKind, listName},
		{collection + "/{name}", "get", names.Kind, itemName},
	} {
		op := &spec3.Operation{
			OperationProps: spec3.OperationProps{
				OperationId: p.action + names.Kind,
				Responses: &spec3.Responses{ResponsesProps: spec3.ResponsesProps{StatusCodeResponses: map[int]*spec3.Response{
					200: {ResponseProps: spec3.ResponseProps{Description: "OK", Content: map[string]*spec3.MediaType{
						"application/json": {MediaTypeProps: spec3.MediaTypeProps{Schema: spec.RefSchema("#/components/schemas/" + p.def)}},
					}}},
				}}},
			},
			VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{
				"x-kubernetes-action":             p.action,
				"x-kubernetes-group-version-kind": map[string]any{"group": gv.Group, "version": gv.Version, "kind": p.kind},
			}},
		}
		paths[p.path] = &spec3.Path{PathProps: spec3.PathProps{Get: op}}
	}
	return nil
}

// refSchema is a reference to a component, wrapped in allOf when it has a
// description (a $ref takes no siblings in OpenAPI v3), as upstream.
func refSchema(name, desc string) *spec.Schema {
	ref := spec.RefSchema("#/components/schemas/" + name)
	if desc == "" {
		return ref
	}
	return &spec.Schema{SchemaProps: spec.SchemaProps{Description: desc, AllOf: []spec.Schema{*ref}}}
}

// publishCRDGroup publishes apiextensions.k8s.io/v1's documents: its v3
// document and its definitions in the v2 document.
func publishCRDGroup(api *server.OpenAPI, defs *openapi.Definitions) error {
	if api == nil {
		return nil
	}
	gv := apiextensionsv1.SchemeGroupVersion
	gvks := []schema.GroupVersionKind{gv.WithKind("CustomResourceDefinition"), gv.WithKind("CustomResourceDefinitionList")}
	schemas, err := defs.Schemas(gvks...)
	if err != nil {
		return fmt.Errorf("openapi v3 for %s: %w", gv, err)
	}
	root := "/" + gvPath(gv) + "/customresourcedefinitions"
	paths := map[string]*spec3.Path{}
	for _, p := range []struct{ path, action, kind string }{
		{root, "list", "CustomResourceDefinitionList"},
		{root + "/{name}", "get", "CustomResourceDefinition"},
	} {
		name, ok := defs.NameForGVK(gv.WithKind(p.kind))
		if !ok {
			return fmt.Errorf("openapi: no definition for %s", p.kind)
		}
		paths[p.path] = &spec3.Path{PathProps: spec3.PathProps{Get: &spec3.Operation{
			OperationProps: spec3.OperationProps{
				OperationId: p.action + "ApiextensionsV1CustomResourceDefinition",
				Responses: &spec3.Responses{ResponsesProps: spec3.ResponsesProps{StatusCodeResponses: map[int]*spec3.Response{
					200: {ResponseProps: spec3.ResponseProps{Description: "OK", Content: map[string]*spec3.MediaType{
						"application/json": {MediaTypeProps: spec3.MediaTypeProps{Schema: spec.RefSchema("#/components/schemas/" + name)}},
					}}},
				}}},
			},
			VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{
				"x-kubernetes-action":             p.action,
				"x-kubernetes-group-version-kind": map[string]any{"group": gv.Group, "version": gv.Version, "kind": p.kind},
			}},
		}}}
	}
	info := &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: version.Get().GitVersion}}
	doc, err := json.Marshal(openapi.NewDocumentV3(info, paths, schemas))
	if err != nil {
		return fmt.Errorf("encode openapi v3 for %s: %w", gv, err)
	}
	api.SetV3(gvPath(gv), doc)
	v2, err := defs.SchemasV2(gvks...)
	if err != nil {
		return fmt.Errorf("openapi v2 for %s: %w", gv, err)
	}
	definitions := make(map[string]any, len(v2))
	for k, v := range v2 {
		definitions[k] = v
	}
	api.MergeV2(nil, definitions)
	return nil
}
