package schema

import (
	"fmt"
	"reflect"
	"regexp"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The value validations under allOf, anyOf, oneOf and not ("junctors")
// are checked as kube-apiserver v1.37 checks a CRD's structural schema
// (k8s.io/apiextensions-apiserver v0.37 pkg/apiserver/schema,
// validation.go and complete.go, with the options CRDs get): a junctor
// may only validate values. It may not say what a value is (type,
// default, nullable, title, description, the x-kubernetes extensions,
// additionalProperties), carry x-kubernetes-validations rules, or mention
// metadata; and the fields it names under the root's junctors must be
// specified outside them too. Checked on the reference (kube-apiserver
// v1.37.2, session 25): a CRD with x-kubernetes-validations, type,
// default, nullable or x-kubernetes-preserve-unknown-fields under allOf,
// oneOf or not is refused with these messages; properties under a
// junctor below the root that the schema does not specify are not.

// intOrStringAnyOf is the anyOf of int-or-string that upstream leaves
// unchecked: exactly these two schemas, nothing else set.
var intOrStringAnyOf = []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}

func isIntOrStringAnyOf(anyOf []apiextensionsv1.JSONSchemaProps) bool {
	return len(anyOf) == 2 && reflect.DeepEqual(anyOf, intOrStringAnyOf)
}

// validateJunctors checks the junctors of s, a schema node or a junctor,
// at p. The int-or-string patterns are not checked: an anyOf that is
// exactly intOrStringAnyOf (skipAnyOf, for a schema node), and that
// anyOf as the first allOf's (skipFirstAllOfAnyOf).
func validateJunctors(s *apiextensionsv1.JSONSchemaProps, skipAnyOf, skipFirstAllOfAnyOf bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !skipAnyOf {
		for i := range s.AnyOf {
			errs = append(errs, validateJunctor(&s.AnyOf[i], false, p.Child("anyOf").Index(i))...)
		}
	}
	for i := range s.AllOf {
		errs = append(errs, validateJunctor(&s.AllOf[i], skipFirstAllOfAnyOf && i == 0, p.Child("allOf").Index(i))...)
	}
	for i := range s.OneOf {
		errs = append(errs, validateJunctor(&s.OneOf[i], false, p.Child("oneOf").Index(i))...)
	}
	if s.Not != nil {
		errs = append(errs, validateJunctor(s.Not, false, p.Child("not"))...)
	}
	return errs
}

// validateJunctor checks one value validation under a junctor, and what
// it holds, at p.
func validateJunctor(v *apiextensionsv1.JSONSchemaProps, skipAnyOf bool, p *field.Path) field.ErrorList {
	errs := validateJunctors(v, skipAnyOf, false, p)
	if v.Pattern != "" {
		if _, err := regexp.Compile(v.Pattern); err != nil {
			errs = append(errs, field.Invalid(p.Child("pattern"), v.Pattern, fmt.Sprintf("must be a valid regular expression, but isn't: %v", err)))
		}
	}
	if items := Items(v); items != nil {
		errs = append(errs, validateJunctor(items, false, p.Child("items"))...)
	}
	for k, f := range v.Properties {
		errs = append(errs, validateJunctor(&f, false, p.Child("properties").Key(k))...)
	}
	forbid := func(child, msg string) { errs = append(errs, field.Forbidden(p.Child(child), msg)) }
	const empty, undefined, unset = "must be empty to be structural", "must be undefined to be structural", "must be false to be structural"
	if v.Type != "" {
		forbid("type", empty)
	}
	if v.AdditionalProperties != nil && (v.AdditionalProperties.Schema != nil || v.AdditionalProperties.Allows) {
		forbid("additionalProperties", undefined)
	}
	if v.Default != nil && string(v.Default.Raw) != "null" {
		forbid("default", undefined)
	}
	if v.Title != "" {
		forbid("title", empty)
	}
	if v.Description != "" {
		forbid("description", empty)
	}
	if v.Nullable {
		forbid("nullable", unset)
	}
	if v.XPreserveUnknownFields != nil && *v.XPreserveUnknownFields {
		forbid("x-kubernetes-preserve-unknown-fields", unset)
	}
	if v.XEmbeddedResource {
		forbid("x-kubernetes-embedded-resource", unset)
	}
	if v.XIntOrString {
		forbid("x-kubernetes-int-or-string", unset)
	}
	if len(v.XListMapKeys) > 0 {
		forbid("x-kubernetes-list-map-keys", empty)
	}
	if v.XListType != nil {
		forbid("x-kubernetes-list-type", undefined)
	}
	if v.XMapType != nil {
		forbid("x-kubernetes-map-type", undefined)
	}
	if len(v.XValidations) > 0 {
		forbid("x-kubernetes-validations", empty)
	}
	if _, ok := v.Properties["metadata"]; ok {
		errs = append(errs, field.Forbidden(p.Child("properties").Key("metadata"), "must not be specified in a nested context"))
	}
	return errs
}

// validateCompleteness checks that every property and items the root's
// junctors name is specified outside them, at the same place (upstream
// checks the root's junctors only).
func validateCompleteness(root *apiextensionsv1.JSONSchemaProps, p *field.Path) field.ErrorList {
	return junctorsComplete(root, root, p, p)
}

// junctorsComplete checks the junctors of v against s, the schema node
// they validate (s at sPath, v at vPath).
func junctorsComplete(v, s *apiextensionsv1.JSONSchemaProps, sPath, vPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if v.Not != nil {
		errs = append(errs, junctorComplete(v.Not, s, sPath, vPath.Child("not"))...)
	}
	for i := range v.AllOf {
		errs = append(errs, junctorComplete(&v.AllOf[i], s, sPath, vPath.Child("allOf").Index(i))...)
	}
	for i := range v.AnyOf {
		errs = append(errs, junctorComplete(&v.AnyOf[i], s, sPath, vPath.Child("anyOf").Index(i))...)
	}
	for i := range v.OneOf {
		errs = append(errs, junctorComplete(&v.OneOf[i], s, sPath, vPath.Child("oneOf").Index(i))...)
	}
	return errs
}

func junctorComplete(v, s *apiextensionsv1.JSONSchemaProps, sPath, vPath *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	if s == nil {
		return field.ErrorList{field.Required(sPath, fmt.Sprintf("because it is defined in %s", vPath))}
	}
	errs := junctorsComplete(v, s, sPath, vPath)
	if vi := Items(v); vi != nil {
		errs = append(errs, junctorComplete(vi, Items(s), sPath.Child("items"), vPath.Child("items"))...)
	}
	for k, vf := range v.Properties {
		sf, ok := s.Properties[k]
		if !ok {
			errs = append(errs, field.Required(sPath.Child("properties").Key(k), fmt.Sprintf("because it is defined in %s", vPath.Child("properties").Key(k))))
			continue
		}
		errs = append(errs, junctorComplete(&vf, &sf, sPath.Child("properties").Key(k), vPath.Child("properties").Key(k))...)
	}
	return errs
}
