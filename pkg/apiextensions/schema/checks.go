package schema

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateSchemas runs the structural-schema checks below the root, the
// default checks and upstream's OpenAPI checks (openapi_checks.go) on
// every version's schema, as upstream. On update (old not nil) a version
// whose schema did not change is not checked again: CRDs stored before
// these checks keep working; and, as upstream's validationOptions, the
// rules old's schemas already broke (a type OpenAPI v3 does not have,
// set items that are not atomic, nullable set or map items and map keys
// neither required nor defaulted) are not required of the new ones.
func ValidateSchemas(crd, old *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	o := openAPIOptions{requireValidPropertyType: true, requireAtomicSetType: true, requireMapListKeysMapSetValidation: true}
	if old != nil {
		o = ratchetedOptions(old)
	}
	var errs field.ErrorList
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		if old != nil && Unchanged(v, old) {
			continue
		}
		p, report := SchemaPath(&crd.Spec, i)
		if !report {
			continue
		}
		errs = append(errs, validateVersionSchema(v.Schema.OpenAPIV3Schema, p, o)...)
	}
	return errs
}

// RulesCheckable tells whether the x-kubernetes-validations rules of
// version i of crd are to be compiled: only when its schema passes the
// checks of ValidateSchemas. Upstream does not compile rules over an
// invalid schema either (their errors would not be actionable); it
// decides per schema node, kapi per version.
func RulesCheckable(crd, old *apiextensionsv1.CustomResourceDefinition, i int) bool {
	o := openAPIOptions{requireValidPropertyType: true, requireAtomicSetType: true, requireMapListKeysMapSetValidation: true}
	if old != nil {
		o = ratchetedOptions(old)
	}
	p, _ := SchemaPath(&crd.Spec, i)
	return len(validateVersionSchema(crd.Spec.Versions[i].Schema.OpenAPIV3Schema, p, o)) == 0
}

func versionSchemaPath(i int) *field.Path {
	return field.NewPath("spec", "versions").Index(i).Child("schema", "openAPIV3Schema")
}

// SchemaPath is the path upstream reports version i's schema errors at,
// and whether they are to be reported for version i. Upstream validates
// its internal version, into which it moves the versions' schema when all
// versions have the same one (apiextensions-apiserver v0.37
// pkg/apis/apiextensions/v1/conversion.go,
// Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_CustomResourceDefinitionSpec):
// then, as for every CRD of one version, the errors are reported once, at
// spec.validation.openAPIV3Schema.
func SchemaPath(spec *apiextensionsv1.CustomResourceDefinitionSpec, i int) (*field.Path, bool) {
	if VersionsAgree(spec, func(v *apiextensionsv1.CustomResourceDefinitionVersion) any { return v.Schema }) {
		return field.NewPath("spec", "validation", "openAPIV3Schema"), i == 0
	}
	return versionSchemaPath(i), true
}

// VersionsAgree tells whether field is the same for every version of
// spec (semantically; true for one version): upstream then moves it to
// the spec of its internal version.
func VersionsAgree(spec *apiextensionsv1.CustomResourceDefinitionSpec, field func(*apiextensionsv1.CustomResourceDefinitionVersion) any) bool {
	if len(spec.Versions) == 0 {
		return false
	}
	first := field(&spec.Versions[0])
	for i := 1; i < len(spec.Versions); i++ {
		if !equality.Semantic.DeepEqual(field(&spec.Versions[i]), first) {
			return false
		}
	}
	return true
}

// validateVersionSchema: the structural checks, then (when they pass)
// the defaults, then the OpenAPI checks, as upstream orders them.
func validateVersionSchema(s *apiextensionsv1.JSONSchemaProps, p *field.Path, o openAPIOptions) field.ErrorList {
	errs := append(validateStructural(s, levelRoot, p), validateCompleteness(s, p)...)
	// Upstream sorts the structural errors by their text (its maps'
	// order is random).
	slices.SortFunc(errs, func(a, b *field.Error) int { return strings.Compare(a.Error(), b.Error()) })
	if len(errs) == 0 {
		errs = append(errs, validateDefaults(s, p, true, false)...)
	}
	return append(errs, validateOpenAPI(s, p, nodeContext{}, true, o)...)
}

// ratchetedOptions turns off each optional rule that a schema of old
// breaks (upstream's validationOptions for an update).
func ratchetedOptions(old *apiextensionsv1.CustomResourceDefinition) openAPIOptions {
	breaks := func(on openAPIOptions) bool {
		for i := range old.Spec.Versions {
			v := &old.Spec.Versions[i]
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			p := versionSchemaPath(i)
			if len(validateOpenAPI(v.Schema.OpenAPIV3Schema, p, nodeContext{}, true, on)) > len(validateOpenAPI(v.Schema.OpenAPIV3Schema, p, nodeContext{}, true, openAPIOptions{})) {
				return true
			}
		}
		return false
	}
	return openAPIOptions{
		requireValidPropertyType:           !breaks(openAPIOptions{requireValidPropertyType: true}),
		requireAtomicSetType:               !breaks(openAPIOptions{requireAtomicSetType: true}),
		requireMapListKeysMapSetValidation: !breaks(openAPIOptions{requireMapListKeysMapSetValidation: true}),
	}
}

// Unchanged reports whether version v's schema is that of old's version
// of the same name.
func Unchanged(v *apiextensionsv1.CustomResourceDefinitionVersion, old *apiextensionsv1.CustomResourceDefinition) bool {
	for _, o := range old.Spec.Versions {
		if o.Name == v.Name {
			return equality.Semantic.DeepEqual(o.Schema, v.Schema)
		}
	}
	return false
}

type schemaLevel int

const (
	levelRoot schemaLevel = iota
	levelItem
	levelField
)

// validateStructural checks the structural invariants upstream checks
// below the root (the root's own rules are the CRD validation's, in
// package apiextensions): a type everywhere but under
// x-kubernetes-int-or-string or -preserve-unknown-fields, items for
// arrays, embedded resources that are objects with properties (or
// preserving unknown fields) and without additionalProperties,
// extensions that go together, patterns that compile.
func validateStructural(s *apiextensionsv1.JSONSchemaProps, lvl schemaLevel, p *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	if s.Type == "array" && (s.Items == nil || (s.Items.Schema == nil && len(s.Items.JSONSchemas) == 0)) {
		errs = append(errs, field.Required(p.Child("items"), "must be specified"))
	}
	if s.Items != nil && s.Items.Schema != nil {
		errs = append(errs, validateStructural(s.Items.Schema, levelItem, p.Child("items"))...)
	}
	for k, v := range s.Properties {
		errs = append(errs, validateStructural(&v, levelField, p.Child("properties").Key(k))...)
	}
	if s.AdditionalProperties != nil {
		if lvl == levelRoot {
			errs = append(errs, field.Forbidden(p.Child("additionalProperties"), "must not be used at the root"))
		}
		if s.AdditionalProperties.Schema != nil {
			errs = append(errs, validateStructural(s.AdditionalProperties.Schema, levelField, p.Child("additionalProperties"))...)
		}
	}
	errs = append(errs, validateJunctors(s, isIntOrStringAnyOf(s.AnyOf), len(s.AllOf) > 0 && isIntOrStringAnyOf(s.AllOf[0].AnyOf), p)...)
	preserve := s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
	if s.XIntOrString && preserve {
		errs = append(errs, field.Invalid(p.Child("x-kubernetes-preserve-unknown-fields"), true, "must be false if x-kubernetes-int-or-string is true"))
	}
	if s.XIntOrString && s.XEmbeddedResource {
		errs = append(errs, field.Invalid(p.Child("x-kubernetes-embedded-resource"), true, "must be false if x-kubernetes-int-or-string is true"))
	}
	if s.Pattern != "" {
		if _, err := regexp.Compile(s.Pattern); err != nil {
			errs = append(errs, field.Invalid(p.Child("pattern"), s.Pattern, fmt.Sprintf("must be a valid regular expression, but isn't: %v", err)))
		}
	}
	if lvl == levelRoot {
		// The root's type and metadata are the CRD validation's.
		return errs
	}
	switch {
	case s.XEmbeddedResource && s.Type == "":
		errs = append(errs, field.Required(p.Child("type"), "must be object if x-kubernetes-embedded-resource is true"))
	case s.XEmbeddedResource && s.Type != "object":
		errs = append(errs, field.Invalid(p.Child("type"), s.Type, "must be object if x-kubernetes-embedded-resource is true"))
	case s.Type == "" && !s.XIntOrString && !preserve:
		msg := "must not be empty for specified object fields"
		if lvl == levelItem {
			msg = "must not be empty for specified array items"
		}
		errs = append(errs, field.Required(p.Child("type"), msg))
	}
	if s.XEmbeddedResource {
		if s.AdditionalProperties != nil {
			errs = append(errs, field.Forbidden(p.Child("additionalProperties"), "must not be used if x-kubernetes-embedded-resource is set"))
		}
		for _, name := range []string{"kind", "apiVersion"} {
			if f, ok := s.Properties[name]; ok && f.Type != "string" {
				errs = append(errs, field.Invalid(p.Child("properties").Key(name).Child("type"), f.Type, "must be string"))
			}
		}
		if md, ok := s.Properties["metadata"]; ok && md.Type != "object" {
			errs = append(errs, field.Invalid(p.Child("properties").Key("metadata").Child("type"), md.Type, "must be object"))
		}
		if !preserve && len(s.Properties) == 0 {
			errs = append(errs, field.Required(p.Child("properties"), "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"))
		}
	}
	return errs
}

// validateDefaults checks every default below s as upstream: it must be
// pruned (no fields the schema does not specify) and valid against the
// schema it is the default of. Defaults of apiVersion, kind and metadata
// (at the root or of an embedded resource) are not checked here.
func validateDefaults(s *apiextensionsv1.JSONSchemaProps, p *field.Path, root, insideMeta bool) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	if s.Default != nil && !insideMeta {
		errs = append(errs, validateDefault(s, p.Child("default"))...)
	}
	if s.Items != nil && s.Items.Schema != nil {
		errs = append(errs, validateDefaults(s.Items.Schema, p.Child("items"), false, insideMeta)...)
	}
	for k, v := range s.Properties {
		meta := insideMeta || ((root || s.XEmbeddedResource) && (k == "metadata" || k == "apiVersion" || k == "kind"))
		errs = append(errs, validateDefaults(&v, p.Child("properties").Key(k), false, meta)...)
	}
	return errs
}

func validateDefault(s *apiextensionsv1.JSONSchemaProps, p *field.Path) field.ErrorList {
	var value any
	if err := utiljson.Unmarshal(s.Default.Raw, &value); err != nil {
		return field.ErrorList{field.Invalid(p, string(s.Default.Raw), fmt.Sprintf("must be valid JSON: %v", err))}
	}
	if m, ok := value.(map[string]any); ok {
		if pruned := Prune(runtime.DeepCopyJSON(m), s); len(pruned) > 0 {
			return field.ErrorList{field.Invalid(p, value, "must not have unknown fields")}
		}
	}
	validator, err := NewValidator(s)
	if err != nil || validator == nil {
		return nil
	}
	var errs field.ErrorList
	for _, e := range validator.validateValue(value) {
		if e.Field == "" || e.Field == "<nil>" {
			e.Field = p.String()
		} else {
			e.Field = p.String() + "." + e.Field
		}
		errs = append(errs, e)
	}
	return errs
}
