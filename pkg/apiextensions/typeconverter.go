package apiextensions

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/apiextensions/conversion"
	"github.com/kapi-dev/kapi/pkg/endpoints/fieldmanager"
	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/openapi"
)

// metaSchemas returns ObjectMeta's OpenAPI v3 schema and those it
// references: the metadata of every custom kind's field-manager schema.
func metaSchemas(defs *openapi.Definitions) (map[string]*spec.Schema, error) {
	m, err := defs.SchemasForNames(objectMetaName)
	if err != nil {
		return nil, fmt.Errorf("metadata schemas: %w", err)
	}
	return m, nil
}

// newCRTypeConverter builds the structured-merge-diff TypeConverter of
// every version of crd, as upstream: each version's structural schema
// with apiVersion, kind and metadata (ObjectMeta) at its root and in
// x-kubernetes-embedded-resource objects, x-kubernetes-int-or-string as
// an untyped scalar, and x-kubernetes-list-type, -list-map-keys,
// -map-type and -preserve-unknown-fields as merge semantics. A version
// without a schema keeps every field (deduced). When the schemas cannot
// be converted (not structural), every field is deduced (atomic lists),
// with a warning.
func newCRTypeConverter(crd *apiextensionsv1.CustomResourceDefinition, meta map[string]*spec.Schema, logger *slog.Logger) managedfields.TypeConverter {
	tc, err := buildCRTypeConverter(crd, meta)
	if err != nil {
		logger.Warn("server-side apply schema of custom resources: falling back to deduced types", "crd", crd.Name, "err", err)
		return managedfields.NewDeducedTypeConverter()
	}
	return tc
}

func buildCRTypeConverter(crd *apiextensionsv1.CustomResourceDefinition, meta map[string]*spec.Schema) (managedfields.TypeConverter, error) {
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
		models[definitionName(gv, kind)] = s
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
	walkSchema(out, func(s *spec.Schema) {
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

// crConvertor converts custom resources between versions with the CRD's
// converter (nil: strategy None, only apiVersion changes), other objects
// with the shared scheme, and accepts the field selector labels of each
// kind: metadata.name, metadata.namespace when namespaced, and the
// selectable fields (anything else is upstream's "field label not
// supported"). The field manager converts through it to compare managed
// fields recorded in other versions.
type crConvertor struct {
	labels    map[schema.GroupVersionKind]crFieldLabels
	converter conversion.Converter
}

// crFieldLabels are the field selector labels of one kind.
type crFieldLabels struct {
	namespaced bool
	fields     []string
}

var _ runtime.ObjectConvertor = crConvertor{}

func (crConvertor) Convert(in, out, context any) error {
	u, ok := in.(*unstructured.Unstructured)
	o, ok2 := out.(*unstructured.Unstructured)
	if !ok || !ok2 {
		return scheme.Scheme.Convert(in, out, context)
	}
	o.Object = runtime.DeepCopyJSON(u.Object)
	return nil
}

func (c crConvertor) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return scheme.Scheme.ConvertToVersion(in, target)
	}
	k, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()})
	if !ok {
		return nil, runtime.NewNotRegisteredGVKErrForTarget("apiextensions", u.GroupVersionKind(), target)
	}
	if c.converter != nil && k.GroupVersion() != u.GroupVersionKind().GroupVersion() {
		converted, err := c.converter.ConvertObject(context.Background(), u, k.GroupVersion())
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

func (c crConvertor) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	l, ok := c.labels[gvk]
	switch {
	case label == "metadata.name":
		return label, value, nil
	case label == "metadata.namespace" && (!ok || l.namespaced):
		return label, value, nil
	case ok && slices.Contains(l.fields, label):
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label not supported: %s", label)
}

// crDefaulter applies the schema defaults of each version to custom
// resources of it.
type crDefaulter map[string]*apiextensionsv1.JSONSchemaProps // by version

func (d crDefaulter) Default(obj runtime.Object) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	if s := d[u.GroupVersionKind().Version]; s != nil {
		applyDefaults(u.Object, s)
	}
}

func newCRDefaulter(crd *apiextensionsv1.CustomResourceDefinition) crDefaulter {
	d := crDefaulter{}
	for _, v := range crd.Spec.Versions {
		if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			d[v.Name] = v.Schema.OpenAPIV3Schema
		}
	}
	return d
}

// fieldManagers returns the installer's field-manager factory of one
// group-version of custom resources (crds by kind served there): their
// main resource and /status get upstream's custom-resource field manager
// on their schemas, /scale (autoscaling/v1 Scale) one on deduced types.
func fieldManagers(crds map[schema.GroupVersionKind]*crdServing) func(schema.GroupVersionKind, string, map[fieldpath.APIVersion]*fieldpath.Set) (handlers.FieldManager, error) {
	return func(kind schema.GroupVersionKind, sub string, reset map[fieldpath.APIVersion]*fieldpath.Set) (handlers.FieldManager, error) {
		if sub == "scale" {
			return fieldmanager.New(fieldmanager.Config{
				Kind:           kind,
				Subresource:    sub,
				TypeConverter:  managedfields.NewDeducedTypeConverter(),
				CustomResource: true,
			})
		}
		c := crds[kind]
		if c == nil {
			return nil, fmt.Errorf("no custom resource definition serves %s", kind)
		}
		m, err := fieldmanager.New(fieldmanager.Config{
			Kind:           kind,
			Subresource:    sub,
			ResetFields:    reset,
			TypeConverter:  c.typeConverter,
			Convertor:      crConvertor{converter: c.converter},
			Defaulter:      c.defaulter,
			Creater:        crCreater{},
			CustomResource: true,
		})
		if err != nil {
			return nil, err
		}
		return m, nil
	}
}
