package customresource

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	structuralschema "github.com/kapi-dev/kapi/pkg/apiextensions/schema"
	"github.com/kapi-dev/kapi/pkg/openapi"
)

// objectMetaName is the OpenAPI definition name of ObjectMeta
// ("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta").
var objectMetaName = openapi.NameForObject(metav1.ObjectMeta{})

// DefinitionName is upstream's OpenAPI definition name of a custom kind:
// the reversed group, the version and the kind
// ("com.example.stable.v1.CronTab"). The OpenAPI documents and the field
// manager's types (whose errors quote it) name kinds so.
func DefinitionName(gv schema.GroupVersion, kind string) string {
	parts := strings.Split(gv.Group, ".")
	slices.Reverse(parts)
	return strings.Join(parts, ".") + "." + gv.Version + "." + kind
}

// MetaSchemas returns ObjectMeta's OpenAPI v3 schema and those it
// references: the metadata of every custom kind's field-manager schema.
func MetaSchemas(defs *openapi.Definitions) (map[string]*spec.Schema, error) {
	m, err := defs.SchemasForNames(objectMetaName)
	if err != nil {
		return nil, fmt.Errorf("metadata schemas: %w", err)
	}
	return m, nil
}

// NewTypeConverter returns the structured-merge-diff TypeConverter of
// every version of crd, as upstream: each version's structural schema
// with apiVersion, kind and metadata (ObjectMeta) at its root and in
// x-kubernetes-embedded-resource objects, x-kubernetes-int-or-string as
// an untyped scalar, and x-kubernetes-list-type, -list-map-keys,
// -map-type and -preserve-unknown-fields as merge semantics. A version
// without a schema keeps every field (deduced). When the schemas cannot
// be converted (not structural), every field is deduced (atomic lists),
// with a warning. The types are built on first use: a server that serves
// many CRDs at start pays for each on its first write, not before it is
// ready.
func NewTypeConverter(crd *apiextensionsv1.CustomResourceDefinition, meta map[string]*spec.Schema, logger *slog.Logger) managedfields.TypeConverter {
	crd = crd.DeepCopy()
	return &lazyTypeConverter{get: sync.OnceValue(func() managedfields.TypeConverter {
		tc, err := BuildTypeConverter(crd, meta)
		if err != nil {
			logger.Warn("server-side apply schema of custom resources: falling back to deduced types", "crd", crd.Name, "err", err)
			return managedfields.NewDeducedTypeConverter()
		}
		return tc
	})}
}

// lazyTypeConverter builds its TypeConverter on first use.
type lazyTypeConverter struct {
	get func() managedfields.TypeConverter
}

func (c *lazyTypeConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	return c.get().ObjectToTyped(obj, opts...)
}

func (c *lazyTypeConverter) TypedToObject(v *typed.TypedValue) (runtime.Object, error) {
	return c.get().TypedToObject(v)
}

// BuildTypeConverter is NewTypeConverter without the fallback: it fails
// when a version's schema cannot be converted.
func BuildTypeConverter(crd *apiextensionsv1.CustomResourceDefinition, meta map[string]*spec.Schema) (managedfields.TypeConverter, error) {
	models := make(map[string]*spec.Schema, len(meta)+len(crd.Spec.Versions))
	for k, v := range meta {
		models[k] = v
	}
	kind := crd.Status.AcceptedNames.Kind
	if kind == "" {
		kind = crd.Spec.Names.Kind
	}
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}
		var in *apiextensionsv1.JSONSchemaProps
		if v.Schema != nil {
			in = v.Schema.OpenAPIV3Schema
		}
		s, err := smdSchema(in)
		if err != nil {
			return nil, fmt.Errorf("version %s: %w", v.Name, err)
		}
		s.AddExtension("x-kubernetes-group-version-kind", []any{
			map[string]any{"group": gv.Group, "version": gv.Version, "kind": kind},
		})
		models[DefinitionName(gv, kind)] = s
	}
	tc, err := managedfields.NewTypeConverter(models, crd.Spec.PreserveUnknownFields)
	if err != nil {
		return nil, err
	}
	return tc, nil
}

// smdSchema converts a version's schema (nil: keep everything) into the
// kube-openapi schema structured-merge-diff types are built from.
func smdSchema(in *apiextensionsv1.JSONSchemaProps) (*spec.Schema, error) {
	out := &spec.Schema{}
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("encode schema: %w", err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			return nil, fmt.Errorf("decode schema: %w", err)
		}
	} else {
		out.AddExtension("x-kubernetes-preserve-unknown-fields", true)
	}
	structuralschema.Walk(out, func(s *spec.Schema) {
		if v, ok := s.Extensions.GetBool("x-kubernetes-int-or-string"); ok && v {
			// Untyped: an integer or a string.
			s.Type = nil
		}
		if v, ok := s.Extensions.GetBool("x-kubernetes-embedded-resource"); ok && v {
			addTypeMeta(s, false)
		}
		// Value validations do not shape merges.
		s.Enum = nil
		s.AllOf, s.AnyOf, s.OneOf, s.Not = nil, nil, nil, nil
	})
	out.Type = spec.StringOrArray{"object"}
	addTypeMeta(out, true)
	return out, nil
}

// addTypeMeta adds apiVersion, kind and metadata (ObjectMeta) properties
// to s; at the root they replace the schema's own.
func addTypeMeta(s *spec.Schema, root bool) {
	if s.Properties == nil {
		s.Properties = map[string]spec.Schema{}
	}
	str := spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}}}
	for _, name := range []string{"apiVersion", "kind"} {
		if _, ok := s.Properties[name]; root || !ok {
			s.Properties[name] = str
		}
	}
	if _, ok := s.Properties["metadata"]; root || !ok {
		s.Properties["metadata"] = *spec.RefSchema("#/components/schemas/" + objectMetaName)
	}
}
