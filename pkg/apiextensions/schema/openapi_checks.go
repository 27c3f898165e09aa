package schema

import (
	"maps"
	"slices"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The OpenAPI checks upstream makes of every schema node of a CRD besides
// the structural ones (apiextensions-apiserver v0.37
// pkg/apis/apiextensions/validation/validation.go,
// ValidateCustomResourceDefinitionOpenAPISchema and
// specStandardValidatorV3.validate), in its order for each node: the
// node's own standard checks, uniqueItems, additionalProperties with
// properties, then the nested schemas, then the extensions
// (x-kubernetes-preserve-unknown-fields, -map-type, -list-type,
// -list-map-keys) and the x-kubernetes-validations entries' own fields.
// Nested properties are walked sorted (upstream: in map order).

// openAPIOptions are upstream's validationOptions that apply here.
type openAPIOptions struct {
	// requireValidPropertyType: a type must be one of OpenAPI v3's.
	requireValidPropertyType bool
	// requireAtomicSetType: the items of a set are atomic.
	requireAtomicSetType bool
	// requireMapListKeysMapSetValidation: set and map items are not
	// nullable, map keys are required or defaulted and not nullable.
	requireMapListKeysMapSetValidation bool
}

// nodeContext is what upstream's specStandardValidator carries down.
type nodeContext struct {
	disallowDefaultsReason string // "" allows defaults
	insideResourceMeta     bool
}

var openAPIV3Types = []string{"array", "boolean", "integer", "number", "object", "string"}

var supportedValidationReasons = []string{
	string(apiextensionsv1.FieldValueDuplicate), string(apiextensionsv1.FieldValueForbidden),
	string(apiextensionsv1.FieldValueInvalid), string(apiextensionsv1.FieldValueRequired),
}

func validateOpenAPI(s *apiextensionsv1.JSONSchemaProps, p *field.Path, c nodeContext, root bool, o openAPIOptions) field.ErrorList {
	if s == nil {
		return nil
	}
	errs := validateStandard(s, p, c, o)
	if s.UniqueItems {
		errs = append(errs, field.Forbidden(p.Child("uniqueItems"), "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"))
	}
	if s.AdditionalProperties != nil {
		if len(s.Properties) != 0 && (!s.AdditionalProperties.Allows || s.AdditionalProperties.Schema != nil) {
			errs = append(errs, field.Forbidden(p.Child("additionalProperties"), "additionalProperties and properties are mutual exclusive"))
		}
		sub := c
		if c.insideResourceMeta {
			sub.disallowDefaultsReason = "inside additionalProperties applying to object metadata"
		}
		errs = append(errs, validateOpenAPI(s.AdditionalProperties.Schema, p.Child("additionalProperties"), sub, false, o)...)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		sub := c
		if (root || s.XEmbeddedResource) && (k == "metadata" || k == "kind" || k == "apiVersion") {
			sub.insideResourceMeta = true
			if root {
				sub.disallowDefaultsReason = "in top-level " + k
			}
		}
		ps := s.Properties[k]
		errs = append(errs, validateOpenAPI(&ps, p.Child("properties").Key(k), sub, false, o)...)
	}
	errs = append(errs, validateOpenAPI(s.Not, p.Child("not"), c, false, o)...)
	for _, of := range []struct {
		name    string
		schemas []apiextensionsv1.JSONSchemaProps
	}{{"allOf", s.AllOf}, {"oneOf", s.OneOf}, {"anyOf", s.AnyOf}} {
		for i := range of.schemas {
			errs = append(errs, validateOpenAPI(&of.schemas[i], p.Child(of.name).Index(i), c, false, o)...)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Definitions)) {
		d := s.Definitions[k]
		errs = append(errs, validateOpenAPI(&d, p.Child("definitions").Key(k), c, false, o)...)
	}
	if s.Items != nil {
		errs = append(errs, validateOpenAPI(s.Items.Schema, p.Child("items"), c, false, o)...)
		for i := range s.Items.JSONSchemas {
			errs = append(errs, validateOpenAPI(&s.Items.JSONSchemas[i], p.Child("items").Index(i), c, false, o)...)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Dependencies)) {
		errs = append(errs, validateOpenAPI(s.Dependencies[k].Schema, p.Child("dependencies").Key(k), c, false, o)...)
	}
	errs = append(errs, validateExtensions(s, p, o)...)
	return append(errs, validateRuleFields(s, p)...)
}

// validateStandard is specStandardValidatorV3.validate.
func validateStandard(s *apiextensionsv1.JSONSchemaProps, p *field.Path, c nodeContext, o openAPIOptions) field.ErrorList {
	var errs field.ErrorList
	if o.requireValidPropertyType && s.Type != "" && !slices.Contains(openAPIV3Types, s.Type) {
		errs = append(errs, field.NotSupported(p.Child("type"), s.Type, openAPIV3Types))
	}
	if s.Default != nil && c.disallowDefaultsReason != "" {
		errs = append(errs, field.Forbidden(p.Child("default"), "must not be set "+c.disallowDefaultsReason))
	}
	if s.ID != "" {
		errs = append(errs, field.Forbidden(p.Child("id"), "id is not supported"))
	}
	if s.AdditionalItems != nil {
		errs = append(errs, field.Forbidden(p.Child("additionalItems"), "additionalItems is not supported"))
	}
	if len(s.PatternProperties) != 0 {
		errs = append(errs, field.Forbidden(p.Child("patternProperties"), "patternProperties is not supported"))
	}
	if len(s.Definitions) != 0 {
		errs = append(errs, field.Forbidden(p.Child("definitions"), "definitions is not supported"))
	}
	if s.Dependencies != nil {
		errs = append(errs, field.Forbidden(p.Child("dependencies"), "dependencies is not supported"))
	}
	if s.Ref != nil {
		errs = append(errs, field.Forbidden(p.Child("$ref"), "$ref is not supported"))
	}
	if s.Type == "null" {
		errs = append(errs, field.Forbidden(p.Child("type"), "type cannot be set to null, use nullable as an alternative"))
	}
	if s.Items != nil && len(s.Items.JSONSchemas) != 0 {
		errs = append(errs, field.Forbidden(p.Child("items"), "items must be a schema object and not an array"))
	}
	if c.insideResourceMeta && s.XEmbeddedResource {
		errs = append(errs, field.Forbidden(p.Child("x-kubernetes-embedded-resource"), "must not be used inside of resource meta"))
	}
	return errs
}

// validateExtensions checks the x-kubernetes-* extensions of one node.
func validateExtensions(s *apiextensionsv1.JSONSchemaProps, p *field.Path, o openAPIOptions) field.ErrorList {
	var errs field.ErrorList
	if s.XPreserveUnknownFields != nil && !*s.XPreserveUnknownFields {
		errs = append(errs, field.Invalid(p.Child("x-kubernetes-preserve-unknown-fields"), *s.XPreserveUnknownFields, "must be true or undefined"))
	}
	errs = append(errs, typeForExtension(s, p, s.XMapType != nil, "object", "must be object if x-kubernetes-map-type is specified")...)
	if s.XMapType != nil && *s.XMapType != "atomic" && *s.XMapType != "granular" {
		errs = append(errs, field.NotSupported(p.Child("x-kubernetes-map-type"), *s.XMapType, []string{"atomic", "granular"}))
	}
	if s.XListType != nil && s.Type != "array" {
		errs = append(errs, typeForExtension(s, p, true, "array", "must be array if x-kubernetes-list-type is specified")...)
	} else if o.requireAtomicSetType && s.XListType != nil && *s.XListType == "set" && s.Items != nil && s.Items.Schema != nil {
		is := s.Items.Schema
		switch is.Type {
		case "array":
			if is.XListType != nil && *is.XListType != "atomic" {
				errs = append(errs, field.Invalid(p.Child("items").Child("x-kubernetes-list-type"), is.XListType, "must be atomic as item of a list with x-kubernetes-list-type=set"))
			}
		case "object":
			if is.XMapType == nil || *is.XMapType != "atomic" {
				// (upstream reports the item's list type as the value)
				errs = append(errs, field.Invalid(p.Child("items").Child("x-kubernetes-map-type"), is.XListType, "must be atomic as item of a list with x-kubernetes-list-type=set"))
			}
		}
	}
	if s.XListType != nil && !slices.Contains([]string{"atomic", "set", "map"}, *s.XListType) {
		errs = append(errs, field.NotSupported(p.Child("x-kubernetes-list-type"), *s.XListType, []string{"atomic", "set", "map"}))
	}
	if len(s.XListMapKeys) > 0 {
		if s.XListType == nil {
			errs = append(errs, field.Required(p.Child("x-kubernetes-list-type"), "must be map if x-kubernetes-list-map-keys is non-empty"))
		} else if *s.XListType != "map" {
			errs = append(errs, field.Invalid(p.Child("x-kubernetes-list-type"), *s.XListType, "must be map if x-kubernetes-list-map-keys is non-empty"))
		}
	}
	if s.XListType != nil && *s.XListType == "map" {
		errs = append(errs, validateListMapSchema(s, p)...)
	}
	if o.requireMapListKeysMapSetValidation {
		errs = append(errs, validateListItemsNullability(s, p)...)
	}
	return errs
}

// typeForExtension: an extension that needs type want (when on) is
// Required without a type, Invalid with another.
func typeForExtension(s *apiextensionsv1.JSONSchemaProps, p *field.Path, on bool, want, msg string) field.ErrorList {
	switch {
	case !on || s.Type == want:
		return nil
	case s.Type == "":
		return field.ErrorList{field.Required(p.Child("type"), msg)}
	default:
		return field.ErrorList{field.Invalid(p.Child("type"), s.Type, msg)}
	}
}

// validateListMapSchema: a list-type map has keys that are scalar
// properties of its object items, each named once.
func validateListMapSchema(s *apiextensionsv1.JSONSchemaProps, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.XListMapKeys) == 0 {
		errs = append(errs, field.Required(p.Child("x-kubernetes-list-map-keys"), "must not be empty if x-kubernetes-list-type is map"))
	}
	if s.Items == nil {
		errs = append(errs, field.Required(p.Child("items"), "must have a schema if x-kubernetes-list-type is map"))
		return errs
	}
	is := s.Items.Schema
	if is == nil {
		return append(errs, field.Invalid(p.Child("items"), internalItems(s.Items), "must only have a single schema if x-kubernetes-list-type is map"))
	}
	if is.Type != "object" {
		return append(errs, field.Invalid(p.Child("items").Child("type"), is.Type, "must be object if parent array's x-kubernetes-list-type is map"))
	}
	seen := map[string]bool{}
	for _, k := range s.XListMapKeys {
		if ks, ok := is.Properties[k]; ok {
			if ks.Type == "array" || ks.Type == "object" {
				// (upstream reports the item's type as the value)
				errs = append(errs, field.Invalid(p.Child("items").Child("properties").Key(k).Child("type"), is.Type, "must be a scalar type if parent array's x-kubernetes-list-type is map"))
			}
		} else {
			errs = append(errs, field.Invalid(p.Child("x-kubernetes-list-map-keys"), s.XListMapKeys, "entries must all be names of item properties"))
		}
		if seen[k] {
			errs = append(errs, field.Invalid(p.Child("x-kubernetes-list-map-keys"), s.XListMapKeys, "must not contain duplicate entries"))
		}
		seen[k] = true
	}
	return errs
}

// validateListItemsNullability is upstream's validateMapListKeysMapSet.
func validateListItemsNullability(s *apiextensionsv1.JSONSchemaProps, p *field.Path) field.ErrorList {
	if s.Items == nil || s.Items.Schema == nil || s.XListType == nil || (*s.XListType != "set" && *s.XListType != "map") {
		return nil
	}
	var errs field.ErrorList
	is := s.Items.Schema
	if is.Nullable {
		errs = append(errs, field.Forbidden(p.Child("items").Child("nullable"), "cannot be nullable when x-kubernetes-list-type is "+*s.XListType))
	}
	if *s.XListType != "map" {
		return errs
	}
	seen := map[string]bool{}
	for _, k := range s.XListMapKeys {
		ks, ok := is.Properties[k]
		if !ok || seen[k] {
			// (a missing key is reported by validateListMapSchema; a
			// key named twice once, as kube-apiserver v1.37.2 answers)
			continue
		}
		seen[k] = true
		kp := p.Child("items").Child("properties").Key(k)
		if !slices.Contains(is.Required, k) && ks.Default == nil {
			errs = append(errs, field.Required(kp.Child("default"), "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"))
		}
		if ks.Nullable {
			errs = append(errs, field.Forbidden(kp.Child("nullable"), "this property is in x-kubernetes-list-map-keys, so it cannot be nullable"))
		}
	}
	return errs
}

// validateRuleFields checks the fields of the x-kubernetes-validations
// entries that need no compilation (the rules themselves are compiled by
// package cel).
func validateRuleFields(s *apiextensionsv1.JSONSchemaProps, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, r := range s.XValidations {
		rp := p.Child("x-kubernetes-validations").Index(i)
		rule, msg := strings.TrimSpace(r.Rule), strings.TrimSpace(r.Message)
		switch {
		case rule == "":
			// (package cel reports "rule is not specified")
		case r.Message != "" && msg == "":
			errs = append(errs, field.Invalid(rp.Child("message"), r.Message, "must be non-empty if specified"))
		case strings.ContainsAny(msg, "\n\r"):
			errs = append(errs, field.Invalid(rp.Child("message"), r.Message, "must not contain line breaks"))
		case strings.ContainsAny(rule, "\n\r") && msg == "":
			errs = append(errs, field.Required(rp.Child("message"), "message must be specified if rule contains line breaks"))
		}
		if r.MessageExpression != "" && strings.TrimSpace(r.MessageExpression) == "" {
			errs = append(errs, field.Required(rp.Child("messageExpression"), "messageExpression must be non-empty if specified"))
		}
		if r.Reason != nil && !slices.Contains(supportedValidationReasons, string(*r.Reason)) {
			errs = append(errs, field.NotSupported(rp.Child("reason"), *r.Reason, supportedValidationReasons))
		}
		if r.FieldPath != "" && strings.TrimSpace(r.FieldPath) == "" {
			errs = append(errs, field.Invalid(rp.Child("fieldPath"), r.FieldPath, "must be non-empty if specified"))
		}
		if strings.ContainsAny(r.FieldPath, "\n\r") {
			errs = append(errs, field.Invalid(rp.Child("fieldPath"), r.FieldPath, "must not contain line breaks"))
		}
	}
	return errs
}

// internalItems is items as upstream's validation holds it, the internal
// JSONSchemaPropsOrArray, which field.Error marshals with Go field names
// and every member (kube-apiserver v1.37.2 answers {"Schema":null,
// "JSONSchemas":[{"ID":"","Schema":"","Ref":null,...}]}).
func internalItems(items *apiextensionsv1.JSONSchemaPropsOrArray) any {
	out := new(apiextensions.JSONSchemaPropsOrArray)
	if err := apiextensionsv1.Convert_v1_JSONSchemaPropsOrArray_To_apiextensions_JSONSchemaPropsOrArray(items, out, nil); err != nil {
		return items
	}
	return out
}
