package openapi

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"weak"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/builder3/util"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/handler"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Schemas returns the definitions of the given kinds and every definition
// they reference, transitively, keyed by REST-friendly name, as OpenAPI v3
// components.schemas (references point at #/components/schemas/). This is
// also the input managedfields.NewTypeConverter expects. The schemas are
// shared: do not modify them.
func (d *Definitions) Schemas(gvks ...schema.GroupVersionKind) (map[string]*spec.Schema, error) {
	names, err := d.namesFor(gvks)
	if err != nil {
		return nil, err
	}
	return d.SchemasForNames(names...)
}

// SchemasV2 is [Definitions.Schemas] for Swagger 2.0 definitions
// (references point at #/definitions/).
func (d *Definitions) SchemasV2(gvks ...schema.GroupVersionKind) (map[string]*spec.Schema, error) {
	names, err := d.namesFor(gvks)
	if err != nil {
		return nil, err
	}
	return d.SchemasV2ForNames(names...)
}

// SchemasForNames is [Definitions.Schemas] for definition names (model
// names or Go canonical type names), for types that are not kinds, such as
// io.k8s.apimachinery.pkg.apis.meta.v1.Patch.
func (d *Definitions) SchemasForNames(names ...string) (map[string]*spec.Schema, error) {
	return d.v3.closure(names, d.v3Schema)
}

// SchemasV2ForNames is [Definitions.SchemasV2] for definition names.
func (d *Definitions) SchemasV2ForNames(names ...string) (map[string]*spec.Schema, error) {
	return d.v2.closure(names, d.v2Schema)
}

// AllSchemas returns every definition as OpenAPI v3 components.schemas. The
// map is the caller's; the schemas are shared: do not modify them.
func (d *Definitions) AllSchemas() map[string]*spec.Schema {
	return d.v3.all(d.v3Schema)
}

func (d *Definitions) namesFor(gvks []schema.GroupVersionKind) ([]string, error) {
	names := make([]string, 0, len(gvks))
	for _, gvk := range gvks {
		name, ok := d.nameByGVK[gvk]
		if !ok {
			return nil, fmt.Errorf("no OpenAPI definition for %v", gvk)
		}
		names = append(names, name)
	}
	return names, nil
}

// lazyTable is one format's schemas, each built from its generated
// definition when first asked for, and kept. Most servers are asked for
// few of them (the metadata schemas custom resources embed, the
// documents of the group-versions a client reads): keeping all ~1,000
// built (a v3 table was ~9 MB of live heap at idle, most of it the
// copies util.WrapRefs makes) is paid only once all are asked for. The
// generated definitions themselves are held only weakly between misses
// (they are ~2.5 MB and cost a few ms to make again).
type lazyTable struct {
	mu      sync.Mutex
	prefix  string // reference prefix: refPrefixV2 or refPrefixV3
	schemas map[string]*spec.Schema
	deps    map[string][]string
	raw     weak.Pointer[rawDefinitions]
}

type rawDefinitions struct {
	defs map[string]common.OpenAPIDefinition
}

// rawLocked returns the generated definitions, made again if they were
// collected since the last miss.
func (t *lazyTable) rawLocked() *rawDefinitions {
	if r := t.raw.Value(); r != nil {
		return r
	}
	r := &rawDefinitions{defs: generatedDefinitions(t.prefix)}
	t.raw = weak.Make(r)
	return r
}

// getLocked returns name's schema and the names it references, building
// them from raw (fetched into *raw on first need) if not built yet.
func (t *lazyTable) getLocked(name string, raw **rawDefinitions, build func(string, common.OpenAPIDefinition) *spec.Schema) (*spec.Schema, []string, bool) {
	if s, ok := t.schemas[name]; ok {
		return s, t.deps[name], true
	}
	if *raw == nil {
		*raw = t.rawLocked()
	}
	def, ok := (*raw).defs[name]
	if !ok {
		return nil, nil, false
	}
	if t.schemas == nil {
		t.schemas, t.deps = map[string]*spec.Schema{}, map[string][]string{}
	}
	s, deps := build(name, def), dependencies(def)
	t.schemas[name], t.deps[name] = s, deps
	return s, deps, true
}

func (t *lazyTable) closure(names []string, build func(string, common.OpenAPIDefinition) *spec.Schema) (map[string]*spec.Schema, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var raw *rawDefinitions
	out := map[string]*spec.Schema{}
	queue := make([]string, 0, len(names))
	for _, n := range names {
		queue = append(queue, DefinitionName(n))
	}
	for len(queue) > 0 {
		name := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if _, done := out[name]; done {
			continue
		}
		s, deps, ok := t.getLocked(name, &raw, build)
		if !ok {
			return nil, fmt.Errorf("no OpenAPI definition named %q", name)
		}
		out[name] = s
		queue = append(queue, deps...)
	}
	return out, nil
}

func (t *lazyTable) all(build func(string, common.OpenAPIDefinition) *spec.Schema) map[string]*spec.Schema {
	t.mu.Lock()
	defer t.mu.Unlock()
	raw := t.rawLocked()
	out := make(map[string]*spec.Schema, len(raw.defs))
	for name := range raw.defs {
		s, _, _ := t.getLocked(name, &raw, build)
		out[name] = s
	}
	return out
}

// v3Schema is name's OpenAPI v3 schema as served.
func (d *Definitions) v3Schema(name string, def common.OpenAPIDefinition) *spec.Schema {
	s := &spec.Schema{
		VendorExtensible:   spec.VendorExtensible{Extensions: maps.Clone(def.Schema.Extensions)},
		SchemaProps:        def.Schema.SchemaProps,
		SwaggerSchemaProps: def.Schema.SwaggerSchemaProps,
	}
	delete(s.Extensions, common.ExtensionV2Schema)
	d.addGVKExtension(name, s)
	return util.WrapRefs(s)
}

// v2Schema is name's Swagger 2.0 schema as served.
func (d *Definitions) v2Schema(name string, def common.OpenAPIDefinition) *spec.Schema {
	s := &spec.Schema{
		VendorExtensible:   spec.VendorExtensible{Extensions: maps.Clone(def.Schema.Extensions)},
		SchemaProps:        def.Schema.SchemaProps,
		SwaggerSchemaProps: def.Schema.SwaggerSchemaProps,
	}
	d.addGVKExtension(name, s)
	// Types whose v3 schema Swagger 2.0 cannot express (IntOrString's
	// oneOf, for one) carry their v2 schema in an extension; it
	// replaces the v3 one whole, as upstream's v2 builder does.
	if v2, ok := def.Schema.Extensions[common.ExtensionV2Schema].(spec.Schema); ok {
		s = &v2
	}
	// kube-apiserver serves /openapi/v2 with defaults pruned.
	return handler.PruneDefaultsSchema(s)
}

func (d *Definitions) addGVKExtension(name string, s *spec.Schema) {
	gvks := d.gvksByName[name]
	if len(gvks) == 0 {
		return
	}
	if s.Extensions == nil {
		s.Extensions = spec.Extensions{}
	}
	s.Extensions[ExtensionGVK] = gvkExtension(gvks)
}

func dependencies(def common.OpenAPIDefinition) []string {
	deps := make([]string, 0, len(def.Dependencies))
	for _, dep := range def.Dependencies {
		deps = append(deps, DefinitionName(dep))
	}
	slices.Sort(deps)
	return slices.Compact(deps)
}
