package openapi

import (
	"fmt"
	"maps"
	"slices"

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
	return closure(d.tableV3(), names)
}

// SchemasV2ForNames is [Definitions.SchemasV2] for definition names.
func (d *Definitions) SchemasV2ForNames(names ...string) (map[string]*spec.Schema, error) {
	return closure(d.tableV2(), names)
}

// AllSchemas returns every definition as OpenAPI v3 components.schemas. The
// map is shared: do not modify it.
func (d *Definitions) AllSchemas() map[string]*spec.Schema {
	return d.tableV3().schemas
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

func closure(t *table, names []string) (map[string]*spec.Schema, error) {
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
		s, ok := t.schemas[name]
		if !ok {
			return nil, fmt.Errorf("no OpenAPI definition named %q", name)
		}
		out[name] = s
		queue = append(queue, t.deps[name]...)
	}
	return out, nil
}

func (d *Definitions) tableV3() *table {
	d.v3.once.Do(func() {
		defs := generatedDefinitions(refPrefixV3)
		d.v3.t = table{
			schemas: make(map[string]*spec.Schema, len(defs)),
			deps:    make(map[string][]string, len(defs)),
		}
		for name, def := range defs {
			s := &spec.Schema{
				VendorExtensible:   spec.VendorExtensible{Extensions: maps.Clone(def.Schema.Extensions)},
				SchemaProps:        def.Schema.SchemaProps,
				SwaggerSchemaProps: def.Schema.SwaggerSchemaProps,
			}
			delete(s.Extensions, common.ExtensionV2Schema)
			d.addGVKExtension(name, s)
			d.v3.t.schemas[name] = util.WrapRefs(s)
			d.v3.t.deps[name] = dependencies(def)
		}
	})
	return &d.v3.t
}

func (d *Definitions) tableV2() *table {
	d.v2.once.Do(func() {
		defs := generatedDefinitions(refPrefixV2)
		d.v2.t = table{
			schemas: make(map[string]*spec.Schema, len(defs)),
			deps:    make(map[string][]string, len(defs)),
		}
		for name, def := range defs {
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
			d.v2.t.schemas[name] = handler.PruneDefaultsSchema(s)
			d.v2.t.deps[name] = dependencies(def)
		}
	})
	return &d.v2.t
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
