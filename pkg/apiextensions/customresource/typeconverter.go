package customresource

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/apiextensions/conversion"
	structuralschema "github.com/kapi-dev/kapi/pkg/apiextensions/schema"
	"github.com/kapi-dev/kapi/pkg/endpoints/fieldmanager"
	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
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

// NewTypeConverter builds the structured-merge-diff TypeConverter of
// every version of crd, as upstream: each version's structural schema
// with apiVersion, kind and metadata (ObjectMeta) at its root and in
// x-kubernetes-embedded-resource objects, x-kubernetes-int-or-string as
// an untyped scalar, and x-kubernetes-list-type, -list-map-keys,
// -map-type and -preserve-unknown-fields as merge semantics. A version
// without a schema keeps every field (deduced). When the schemas cannot
// be converted (not structural), every field is deduced (atomic lists),
// with a warning.
func NewTypeConverter(crd *apiextensionsv1.CustomResourceDefinition, meta map[string]*spec.Schema, logger *slog.Logger) managedfields.TypeConverter {
	tc, err := BuildTypeConverter(crd, meta)
	if err != nil {
		logger.Warn("server-side apply schema of custom resources: falling back to deduced types", "crd", crd.Name, "err", err)
		return managedfields.NewDeducedTypeConverter()
	}
	return tc
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

// Convertor converts custom resources between versions with the CRD's
// converter (nil: strategy None, only apiVersion changes), other objects
// with the shared scheme, and accepts the field selector labels of each
// kind: metadata.name, metadata.namespace when namespaced, and the
// selectable fields (anything else is upstream's "field label not
// supported"). The field manager converts through it to compare managed
// fields recorded in other versions.
type Convertor struct {
	// Kinds are the field selector labels of each kind.
	Kinds map[schema.GroupVersionKind]KindLabels
	// Converter is the CRD's converter; nil: strategy None.
	Converter conversion.Converter
}

// KindLabels are the field selector labels of one kind.
type KindLabels struct {
	// Namespaced: metadata.namespace is a label.
	Namespaced bool
	// Fields are the labels of the selectable fields (LabelNames).
	Fields []string
}

var _ runtime.ObjectConvertor = Convertor{}

func (Convertor) Convert(in, out, context any) error {
	u, ok := in.(*unstructured.Unstructured)
	o, ok2 := out.(*unstructured.Unstructured)
	if !ok || !ok2 {
		return scheme.Scheme.Convert(in, out, context)
	}
	o.Object = runtime.DeepCopyJSON(u.Object)
	return nil
}

func (c Convertor) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return scheme.Scheme.ConvertToVersion(in, target)
	}
	k, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()})
	if !ok {
		return nil, runtime.NewNotRegisteredGVKErrForTarget("apiextensions", u.GroupVersionKind(), target)
	}
	if c.Converter != nil && k.GroupVersion() != u.GroupVersionKind().GroupVersion() {
		converted, err := c.Converter.ConvertObject(context.Background(), u, k.GroupVersion())
		if err != nil {
			return nil, err
		}
		if converted == u {
			converted = u.DeepCopy()
		}
		return converted, nil
	}
	out := u.DeepCopy()
	out.SetAPIVersion(k.GroupVersion().String())
	return out, nil
}

func (c Convertor) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	l, ok := c.Kinds[gvk]
	switch {
	case label == "metadata.name":
		return label, value, nil
	case label == "metadata.namespace" && (!ok || l.Namespaced):
		return label, value, nil
	case ok && slices.Contains(l.Fields, label):
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label not supported: %s", label)
}

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
