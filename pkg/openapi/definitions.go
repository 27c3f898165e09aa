package openapi

import (
	"reflect"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	generated "github.com/kapi-dev/kapi/pkg/generated/openapi"
)

// ExtensionGVK is the vendor extension listing the group-version-kinds a
// definition is served as.
const ExtensionGVK = "x-kubernetes-group-version-kind"

// Reference prefixes of the two document formats.
const (
	refPrefixV2 = "#/definitions/"
	refPrefixV3 = "#/components/schemas/"
)

// Definitions indexes the generated OpenAPI definitions of every type kapi
// serves. Build one with [NewDefinitions] and share it: it is safe for
// concurrent use and builds each schema of each format lazily, once.
type Definitions struct {
	// gvksByName lists, per definition name, the kinds it is served as,
	// sorted by group, version, kind (upstream's order).
	gvksByName map[string][]schema.GroupVersionKind
	// nameByGVK is the inverse of gvksByName. Both hold only kinds whose
	// type has a generated definition.
	nameByGVK map[schema.GroupVersionKind]string

	v2, v3 lazyTable

	parser func() *typed.Parser
}

// NewDefinitions indexes the generated definitions. The index (which kinds
// each definition is served as) is generated with them
// (zz_generated.smd.go, checked by TestGeneratedIndexEqualComputed against
// a scheme of every API group-version kapi knows), so building one runs
// neither the generated code nor the API groups' scheme registration.
func NewDefinitions() *Definitions {
	d := &Definitions{
		gvksByName: make(map[string][]schema.GroupVersionKind, len(generatedDefinitionGVKs)),
		nameByGVK:  map[schema.GroupVersionKind]string{},
		parser:     sync.OnceValue(newParser),
	}
	d.v2.prefix, d.v3.prefix = refPrefixV2, refPrefixV3
	for _, e := range generatedDefinitionGVKs {
		d.gvksByName[e.name] = e.gvks
		for _, gvk := range e.gvks {
			d.nameByGVK[gvk] = e.name
		}
	}
	return d
}

// definitionGVKs is one entry of the generated index: a definition and
// the kinds it is served as, sorted by group, version and kind
// (upstream's order).
type definitionGVKs struct {
	name string
	gvks []schema.GroupVersionKind
}

// DefinitionName returns the REST-friendly definition name for name, which is
// either already a model name ("io.k8s.api.core.v1.ConfigMap", what the
// generated code and the types' OpenAPIModelName methods use) or a Go
// canonical type name ("k8s.io/api/core/v1.ConfigMap").
func DefinitionName(name string) string {
	if !strings.Contains(name, "/") {
		return name
	}
	return util.ToRESTFriendlyName(name)
}

// NameForObject returns the definition name of a Go API object or value, for
// example "io.k8s.apimachinery.pkg.apis.meta.v1.Status" for &metav1.Status{}.
func NameForObject(obj any) string {
	if t := reflect.TypeOf(obj); t != nil && t.Kind() == reflect.Pointer {
		// Model names are declared on value receivers; a nil pointer is as
		// good as any for the type.
		obj = reflect.New(t.Elem()).Elem().Interface()
	}
	return DefinitionName(util.GetCanonicalTypeName(obj))
}

// NameForGVK returns the definition name of the kind, and whether there is a
// definition for it.
func (d *Definitions) NameForGVK(gvk schema.GroupVersionKind) (string, bool) {
	name, ok := d.nameByGVK[gvk]
	return name, ok
}

// GVKs returns the kinds a definition is served as (the content of its
// x-kubernetes-group-version-kind extension), sorted by group, version and
// kind; nil if none. The slice is shared: do not modify it.
func (d *Definitions) GVKs(name string) []schema.GroupVersionKind {
	return d.gvksByName[DefinitionName(name)]
}

// Namer returns the definition name and extensions for a generated
// definition key, in the shape of kube-openapi's
// common.Config.GetDefinitionName, so the index can drive kube-openapi's
// builders and handlers too.
func (d *Definitions) Namer(name string) (string, spec.Extensions) {
	name = DefinitionName(name)
	gvks := d.gvksByName[name]
	if len(gvks) == 0 {
		return name, nil
	}
	return name, spec.Extensions{ExtensionGVK: gvkExtension(gvks)}
}

// gvkExtension renders kinds as the extension's JSON value: a list of
// {group, version, kind} objects, the form managedfields parses.
func gvkExtension(gvks []schema.GroupVersionKind) []any {
	out := make([]any, 0, len(gvks))
	for _, gvk := range gvks {
		out = append(out, map[string]any{
			"group":   gvk.Group,
			"version": gvk.Version,
			"kind":    gvk.Kind,
		})
	}
	return out
}

// generatedDefinitions calls the generated code with references of the given
// prefix and re-keys the result by REST-friendly name.
func generatedDefinitions(prefix string) map[string]common.OpenAPIDefinition {
	ref := func(name string) spec.Ref {
		return spec.MustCreateRef(prefix + common.EscapeJsonPointer(DefinitionName(name)))
	}
	defs := generated.GetOpenAPIDefinitions(ref)
	out := make(map[string]common.OpenAPIDefinition, len(defs))
	for k, v := range defs {
		out[DefinitionName(k)] = v
	}
	return out
}
