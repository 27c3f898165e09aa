package apiextensions

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"

	structuralschema "github.com/kapi-dev/kapi/pkg/apiextensions/schema"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kapi-dev/kapi/pkg/apiextensions/customresource"
	"github.com/kapi-dev/kapi/pkg/openapi"
	"github.com/kapi-dev/kapi/pkg/server"
)

const (
	objectMetaName = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	listMetaName   = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
)

var deleteOptionsName = openapi.NameForObject(&metav1.DeleteOptions{})

// clientGoKindsOnly returns a copy of d whose kinds (the
// x-kubernetes-group-version-kind extension) are only those of
// group-versions client-go's scheme has: upstream names the definitions
// of custom resources' v3 documents with that scheme (kube-apiserver
// v1.37.2's lists DeleteOptions in 55 group-versions there, without
// admission, apiextensions, apiregistration and imagepolicy, where its
// other documents list all 62).
func clientGoKindsOnly(d *spec.Schema) *spec.Schema {
	gvks, ok := d.Extensions[openapi.ExtensionGVK].([]any)
	if !ok {
		return d
	}
	var kept []any
	for _, e := range gvks {
		m, _ := e.(map[string]any)
		g, _ := m["group"].(string)
		v, _ := m["version"].(string)
		if clientgoscheme.Scheme.IsVersionRegistered(schema.GroupVersion{Group: g, Version: v}) {
			kept = append(kept, e)
		}
	}
	out := *d
	out.Extensions = maps.Clone(d.Extensions)
	out.Extensions[openapi.ExtensionGVK] = kept
	return &out
}

// crBuiltinDefinitions are the built-in definitions the documents of
// custom resources reference: metadata, the bodies and responses of
// their operations, and the scale subresource's Scale.
var crBuiltinDefinitions = []string{
	objectMetaName, listMetaName,
	openapi.NameForObject(&metav1.Status{}),
	deleteOptionsName,
	openapi.NameForObject(&metav1.Patch{}),
	openapi.NameForObject(&autoscalingv1.Scale{}),
}

// crOpenAPI publishes the OpenAPI of custom resources, per group-version:
// a v3 document (every CRD serving the group-version: its kind's and
// list's schemas and the operations apiextensions-apiserver's builder
// publishes, built by pkg/openapi), and the same paths and definitions as
// the group-version's part of the v2 document (schemas made
// v2-compatible as upstream), removed when the CRD goes. Both are built
// when first requested: serving a CRD (each of hundreds at start) costs
// no OpenAPI work. A nil crOpenAPI publishes nothing.
type crOpenAPI struct {
	api  *server.OpenAPI
	defs *openapi.Definitions
	// meta returns the ObjectMeta and ListMeta schemas and what they
	// reference, built on first use: they need the generated definitions
	// (~13 ms and 5 MB to make), which a start with no custom resources
	// does not otherwise need.
	meta func() (map[string]*spec.Schema, error)
}

func newCROpenAPI(api *server.OpenAPI, defs *openapi.Definitions) (*crOpenAPI, error) {
	if api == nil {
		return nil, nil
	}
	meta := sync.OnceValues(func() (map[string]*spec.Schema, error) {
		m, err := defs.SchemasForNames(objectMetaName, listMetaName)
		if err != nil {
			return nil, fmt.Errorf("openapi: metadata schemas: %w", err)
		}
		return m, nil
	})
	// The built-in definitions custom resources' v2 paths reference, for
	// good: several group-versions share them.
	api.AddV2Source(func() (map[string]any, map[string]any, map[string]any, error) {
		v2, err := defs.SchemasV2ForNames(crBuiltinDefinitions...)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("openapi v2 of custom resources: %w", err)
		}
		out := make(map[string]any, len(v2))
		for k, v := range v2 {
			out[k] = v
		}
		return nil, out, nil, nil
	})
	return &crOpenAPI{api: api, defs: defs, meta: meta}, nil
}

func (o *crOpenAPI) remove(gv schema.GroupVersion) {
	if o == nil {
		return
	}
	o.api.SetV3(openapi.DocumentPath(gv), nil)
	o.api.SetV2Func(openapi.DocumentPath(gv), nil)
}

// crResources are the (sub)resources gv serves for crds, and the
// definition names of the custom kinds.
func crResources(gv schema.GroupVersion, crds []*apiextensionsv1.CustomResourceDefinition) ([]openapi.Resource, map[schema.GroupVersionKind]string) {
	var out []openapi.Resource
	names := map[schema.GroupVersionKind]string{}
	for _, crd := range crds {
		v := crdVersion(crd, gv.Version)
		if v == nil {
			continue
		}
		n := crd.Status.AcceptedNames
		namespaced := crd.Spec.Scope == apiextensionsv1.NamespaceScoped
		kind := gv.WithKind(n.Kind)
		names[kind] = customresource.DefinitionName(gv, n.Kind)
		names[gv.WithKind(n.ListKind)] = customresource.DefinitionName(gv, n.ListKind)
		out = append(out, openapi.Resource{Name: n.Plural, Namespaced: namespaced, Kind: kind, ListKind: n.ListKind})
		if v.Subresources != nil && v.Subresources.Status != nil {
			out = append(out, openapi.Resource{Name: n.Plural + "/status", Namespaced: namespaced, Kind: kind})
		}
		if v.Subresources != nil && v.Subresources.Scale != nil {
			out = append(out, openapi.Resource{Name: n.Plural + "/scale", Namespaced: namespaced, Kind: autoscalingv1.SchemeGroupVersion.WithKind("Scale")})
		}
	}
	return out, names
}

// paths builds gv's operations for crds.
func (o *crOpenAPI) paths(gv schema.GroupVersion, crds []*apiextensionsv1.CustomResourceDefinition) (*openapi.Paths, map[schema.GroupVersionKind]string, error) {
	resources, names := crResources(gv, crds)
	p, err := openapi.BuildPaths(gv, resources, openapi.PathsConfig{
		Style: openapi.CustomResource,
		DefinitionName: func(gvk schema.GroupVersionKind) (string, bool) {
			if n, ok := names[gvk]; ok {
				return n, true
			}
			return o.defs.NameForGVK(gvk)
		},
	})
	return p, names, err
}

// set publishes the documents of gv for crds (each serving gv, none
// modified afterwards), built when first requested.
func (o *crOpenAPI) set(gv schema.GroupVersion, crds []*apiextensionsv1.CustomResourceDefinition) {
	if o == nil {
		return
	}
	type built struct {
		paths *openapi.Paths
		names map[schema.GroupVersionKind]string
	}
	build := sync.OnceValues(func() (built, error) {
		p, names, err := o.paths(gv, crds)
		return built{p, names}, err
	})
	o.api.SetV3Func(openapi.DocumentPath(gv), func() ([]byte, error) {
		b, err := build()
		if err != nil {
			return nil, err
		}
		return o.documentV3(gv, crds, b.paths, b.names)
	})
	o.api.SetV2Func(openapi.DocumentPath(gv), func() (map[string]any, map[string]any, map[string]any, error) {
		b, err := build()
		if err != nil {
			return nil, nil, nil, err
		}
		return partV2(gv, crds, b.paths)
	})
}

// documentV3 encodes gv's v3 document: the operations, the custom kinds'
// schemas and the built-in ones the operations reference.
func (o *crOpenAPI) documentV3(gv schema.GroupVersion, crds []*apiextensionsv1.CustomResourceDefinition, paths *openapi.Paths, names map[schema.GroupVersionKind]string) ([]byte, error) {
	custom := map[string]bool{}
	for _, n := range names {
		custom[n] = true
	}
	builtin := slices.DeleteFunc(paths.Definitions(), func(n string) bool { return custom[n] })
	schemas, err := o.defs.SchemasForNames(append(builtin, objectMetaName, listMetaName)...)
	if err != nil {
		return nil, fmt.Errorf("openapi v3 for %s: %w", gv, err)
	}
	for _, crd := range crds {
		if err := addCRDV3(gv, crd, schemas); err != nil {
			return nil, fmt.Errorf("openapi v3 for %s: %s: %w", gv, crd.Name, err)
		}
	}
	if d, ok := schemas[deleteOptionsName]; ok {
		schemas[deleteOptionsName] = clientGoKindsOnly(d)
	}
	info := &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes CRD Swagger", Version: "v0.1.0"}}
	doc, err := json.Marshal(openapi.NewDocumentV3(info, paths.V3(), schemas))
	if err != nil {
		return nil, fmt.Errorf("encode openapi v3 for %s: %w", gv, err)
	}
	return doc, nil
}

// addCRDV3 adds the v3 schemas of crd's kind and list in version
// gv.Version to schemas.
func addCRDV3(gv schema.GroupVersion, crd *apiextensionsv1.CustomResourceDefinition, schemas map[string]*spec.Schema) error {
	version := crdVersion(crd, gv.Version)
	if version == nil {
		return nil
	}
	var item *spec.Schema
	if version.Schema != nil && version.Schema.OpenAPIV3Schema != nil {
		s, err := structuralschema.ToOpenAPI(version.Schema.OpenAPIV3Schema)
		if err != nil {
			return err
		}
		structuralschema.Walk(s, unfoldIntOrString)
		structuralschema.Walk(s, typedValidationRules)
		item = s
	}
	itemName, listName, item, list := kindDefinitions(gv, crd, item, false, refSchema)
	addEmbeddedProperties(item, false, refSchema)
	schemas[itemName] = item
	schemas[listName] = list
	return nil
}

// refSchema is a reference to a component, wrapped in allOf when it has a
// description (a $ref takes no siblings in OpenAPI v3), as upstream.
func refSchema(name, desc string) spec.Schema {
	ref := spec.RefSchema("#/components/schemas/" + name)
	if desc == "" {
		return *ref
	}
	return spec.Schema{SchemaProps: spec.SchemaProps{Description: desc, AllOf: []spec.Schema{*ref}}}
}

// publishCRDGroup publishes apiextensions.k8s.io/v1's documents (its
// resources as g serves them, built-in rules), built when first asked for.
func publishCRDGroup(api *server.OpenAPI, gv schema.GroupVersion, resources []openapi.Resource) {
	if api == nil {
		return
	}
	openapi.PublishGroupVersions(api, openapi.Default, openapi.KubernetesInfo(), []openapi.GroupVersionResources{{GroupVersion: gv, Resources: resources}})
	openapi.PublishRoots(api, openapi.Default, openapi.GroupRoot(gv.Group))
}

// unfoldIntOrString publishes x-kubernetes-int-or-string as upstream's
// Structural.Unfold does (apiextensions-apiserver v0.37
// pkg/apiserver/schema/unfold.go): anyOf [{type: integer}, {type:
// string}], or, when the schema has an anyOf of its own, that pair as the
// first allOf entry; unless one of the two is there already. (ToOpenAPI's
// type [integer, string] is for validation only: not OpenAPI v3.)
func unfoldIntOrString(s *spec.Schema) {
	if v, ok := s.Extensions.GetBool("x-kubernetes-int-or-string"); !ok || !v {
		return
	}
	s.Type = nil
	if isIntOrStringPair(s.AnyOf) || (len(s.AllOf) > 0 && isIntOrStringPair(s.AllOf[0].AnyOf)) {
		return
	}
	pair := []spec.Schema{
		{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"integer"}}},
		{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}}},
	}
	if len(s.AnyOf) == 0 {
		s.AnyOf = pair
		return
	}
	s.AllOf = append([]spec.Schema{{SchemaProps: spec.SchemaProps{AnyOf: pair}}}, s.AllOf...)
}

// typedValidationRules makes a schema's x-kubernetes-validations the
// apiextensions/v1 ValidationRules upstream's structural schema holds, so
// that each rule's keys are written in that struct's order (rule,
// message, messageExpression, reason, fieldPath, optionalOldSelf), as
// kube-apiserver v1.37.2 writes them in /openapi/v3 (in v2 they are
// sorted: kube-aggregator parses the document again).
func typedValidationRules(s *spec.Schema) {
	v, ok := s.Extensions["x-kubernetes-validations"]
	if !ok {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	var rules apiextensionsv1.ValidationRules
	if err := json.Unmarshal(b, &rules); err != nil {
		return // left as it is: the CRD's validation accepted it
	}
	s.Extensions["x-kubernetes-validations"] = rules
}

func isIntOrStringPair(l []spec.Schema) bool {
	if len(l) != 2 {
		return false
	}
	only := func(s spec.Schema, t string) bool {
		want := spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{t}}}
		return reflect.DeepEqual(s, want)
	}
	return only(l[0], "integer") && only(l[1], "string")
}

// addEmbeddedProperties gives each x-kubernetes-embedded-resource object
// below s (not s itself, the resource) the apiVersion, kind and metadata
// properties, with kind and apiVersion required, as upstream's builder
// (apiextensions-apiserver v0.37 pkg/controller/openapi/builder,
// addEmbeddedProperties); in v2 not for those that preserve unknown
// fields (kubectl would refuse the fields it does not know).
func addEmbeddedProperties(s *spec.Schema, v2 bool, ref func(name, desc string) spec.Schema) {
	var add func(s *spec.Schema)
	add = func(s *spec.Schema) {
		if s == nil {
			return
		}
		for k, v := range s.Properties {
			add(&v)
			s.Properties[k] = v
		}
		if s.Items != nil {
			add(s.Items.Schema)
		}
		if s.AdditionalProperties != nil {
			add(s.AdditionalProperties.Schema)
		}
		if preserve, _ := s.Extensions.GetBool("x-kubernetes-preserve-unknown-fields"); preserve && v2 {
			return
		}
		if embedded, _ := s.Extensions.GetBool("x-kubernetes-embedded-resource"); !embedded {
			return
		}
		str := func(desc string) spec.Schema {
			return spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}, Description: desc}}
		}
		if s.Properties == nil {
			s.Properties = map[string]spec.Schema{}
		}
		s.Properties["apiVersion"] = str("apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources")
		s.Properties["kind"] = str("kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds")
		s.Properties["metadata"] = ref(objectMetaName, "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata")
		if !slices.Contains(s.Required, "kind") {
			s.Required = append(s.Required, "kind")
		}
		if !slices.Contains(s.Required, "apiVersion") {
			s.Required = append(s.Required, "apiVersion")
		}
	}
	if s == nil {
		return
	}
	for k, v := range s.Properties {
		add(&v)
		s.Properties[k] = v
	}
}
