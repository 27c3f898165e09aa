package schema

import (
	"strconv"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	openapierrors "k8s.io/kube-openapi/pkg/validation/errors"
)

// Validation ratcheting (KEP-4008, GA in Kubernetes 1.33): on update, an
// error of a value that did not change does not fail the update. A value
// is unchanged when it correlates with an old value (same property or
// map key, same keys in a list-type=map list; items of other lists do
// not correlate) and is deep-equal to it; everything below an unchanged
// value is unchanged. The CEL rules ratchet in package cel (rules using
// oldSelf never do); the OpenAPI schema errors here.

// ValidateUpdate is Validate on update: errors of values unchanged from
// old are dropped. s is the version's schema (list types, map keys).
func (v *Validator) ValidateUpdate(obj, old map[string]any, s *apiextensionsv1.JSONSchemaProps) field.ErrorList {
	return v.ValidateUpdateRatcheting(obj, old, s, nil)
}

// ValidateUpdateRatcheting is ValidateUpdate; ratchet (nil: not
// measured) is added the time spent finding the unchanged values.
func (v *Validator) ValidateUpdateRatcheting(obj, old map[string]any, s *apiextensionsv1.JSONSchemaProps, ratchet *time.Duration) field.ErrorList {
	if v == nil {
		return nil
	}
	res := v.sv.Validate(obj)
	if res == nil || len(res.Errors) == 0 {
		return nil
	}
	var unchanged []string
	start := time.Now()
	unchangedPaths(obj, old, s, "", &unchanged)
	if ratchet != nil {
		*ratchet += time.Since(start)
	}
	var kept []error
	for _, err := range flattenOpenAPIErrors(res.Errors) {
		if ve, ok := err.(*openapierrors.Validation); ok && ratchets(ve, unchanged) {
			continue
		}
		kept = append(kept, err)
	}
	return toFieldErrors(kept)
}

func flattenOpenAPIErrors(errs []error) []error {
	var out []error
	for _, err := range errs {
		if ce, ok := err.(*openapierrors.CompositeError); ok {
			out = append(out, flattenOpenAPIErrors(ce.Errors)...)
			continue
		}
		out = append(out, err)
	}
	return out
}

// ratchets reports whether the value an error is about lies at or below
// an unchanged path. A missing required property is an error of the
// object that lacks it.
func ratchets(ve *openapierrors.Validation, unchanged []string) bool {
	owner := ve.Name
	if ve.Code() == openapierrors.RequiredFailCode {
		owner = ""
		if i := strings.LastIndexByte(ve.Name, '.'); i >= 0 {
			owner = ve.Name[:i]
		}
	}
	for _, u := range unchanged {
		if u == "" || owner == u || strings.HasPrefix(owner, u+".") || strings.HasPrefix(owner, u+"[") {
			return true
		}
	}
	return false
}

// unchangedPaths appends to out the outermost correlated values of obj
// that equal their old values, by the path the schema validator names
// them with ("spec.list[2]"; the root is "").
func unchangedPaths(obj, old any, s *apiextensionsv1.JSONSchemaProps, path string, out *[]string) {
	if equality.Semantic.DeepEqual(obj, old) {
		*out = append(*out, path)
		return
	}
	if s == nil {
		return
	}
	switch v := obj.(type) {
	case map[string]any:
		o, ok := old.(map[string]any)
		if !ok {
			return
		}
		for k, child := range v {
			oc, ok := o[k]
			if !ok {
				continue
			}
			cs := AdditionalProperties(s)
			if p, ok := propertySchema(s, k); ok {
				cs = p
			}
			if cs != nil {
				cp := k
				if path != "" {
					cp = path + "." + k
				}
				unchangedPaths(child, oc, cs, cp, out)
			}
		}
	case []any:
		o, ok := old.([]any)
		is := Items(s)
		if !ok || is == nil || s.XListType == nil || *s.XListType != "map" || len(s.XListMapKeys) == 0 {
			return
		}
		byKey := make(map[string]any, len(o))
		for _, item := range o {
			byKey[ListMapKey(item, s.XListMapKeys)] = item
		}
		for i, item := range v {
			if oi, ok := byKey[ListMapKey(item, s.XListMapKeys)]; ok {
				unchangedPaths(item, oi, is, path+"["+strconv.Itoa(i)+"]", out)
			}
		}
	}
}
