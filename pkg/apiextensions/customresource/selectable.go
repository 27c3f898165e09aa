package customresource

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/apiextensions/cel"
)

// maxSelectableFields is upstream's limit of selectableFields per version.
const maxSelectableFields = 8

// SelectableField is one field selector label of a version: its label
// ("spec.color") and the property names leading to it.
type SelectableField struct {
	label string
	path  []string
}

// ValidateSelectableFields checks a version's selectableFields as
// upstream: a schema is needed; each jsonPath is required, resolves to a
// property (no array notation) outside metadata, of type string, boolean
// or integer, and is not a duplicate; at most 8 distinct paths.
func ValidateSelectableFields(v *apiextensionsv1.CustomResourceDefinitionVersion, p *field.Path) field.ErrorList {
	if len(v.SelectableFields) == 0 {
		return nil
	}
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return field.ErrorList{field.Invalid(p, "", "selectableFields may only be set when version.schema.openAPIV3Schema is not included")}
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, f := range v.SelectableFields {
		jp := p.Index(i).Child("jsonPath")
		if f.JSONPath == "" {
			errs = append(errs, field.Required(jp, ""))
			continue
		}
		names, s, err := resolveSelectablePath(v.Schema.OpenAPIV3Schema, f.JSONPath)
		if err != nil {
			errs = append(errs, field.Invalid(jp, f.JSONPath, fmt.Sprintf("is an invalid path: %v", err)))
			continue
		}
		if names[0] == "metadata" {
			errs = append(errs, field.Invalid(jp, f.JSONPath, "must not point to fields in metadata"))
		}
		switch s.Type {
		case "string", "boolean", "integer":
		default:
			errs = append(errs, field.Invalid(jp, f.JSONPath, "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."))
		}
		label := strings.Join(names, ".")
		if seen[label] {
			errs = append(errs, field.Duplicate(jp, f.JSONPath))
		}
		seen[label] = true
	}
	if len(seen) > maxSelectableFields {
		errs = append(errs, field.TooMany(p, len(seen), maxSelectableFields))
	}
	return errs
}

// resolveSelectablePath resolves jsonPath against the root schema s: every
// step names a property, or a key of additionalProperties.
func resolveSelectablePath(s *apiextensionsv1.JSONSchemaProps, jsonPath string) ([]string, *apiextensionsv1.JSONSchemaProps, error) {
	names, err := cel.ParseFieldPath(jsonPath)
	if err != nil {
		return nil, nil, err
	}
	if len(names) == 0 {
		return nil, nil, fmt.Errorf("must be non-empty")
	}
	for _, name := range names {
		switch {
		case s.Properties != nil:
			p, ok := s.Properties[name]
			if !ok {
				return nil, nil, fmt.Errorf("does not refer to a valid field")
			}
			s = &p
		case s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
			s = s.AdditionalProperties.Schema
		default:
			return nil, nil, fmt.Errorf("does not refer to a valid field")
		}
	}
	return names, s, nil
}

// SelectableFields returns the selectable fields of a valid version.
func SelectableFields(v *apiextensionsv1.CustomResourceDefinitionVersion) []SelectableField {
	var out []SelectableField
	for _, f := range v.SelectableFields {
		names, err := cel.ParseFieldPath(f.JSONPath)
		if err != nil || len(names) == 0 {
			continue
		}
		out = append(out, SelectableField{label: strings.Join(names, "."), path: names})
	}
	return out
}

// LabelNames returns the field selector labels of fs ("spec.color").
func LabelNames(fs []SelectableField) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.label
	}
	return out
}

// AttrsFunc returns the selector attributes of custom resources: labels,
// metadata.name, metadata.namespace and the version's selectable fields
// (read from sel at each call: it follows CRD updates), as upstream: a
// string as is, an integer or boolean formatted, anything else or an
// absent field "".
func AttrsFunc(sel *atomic.Pointer[[]SelectableField]) func(runtime.Object) (labels.Set, fields.Set, error) {
	return func(obj runtime.Object) (labels.Set, fields.Set, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, nil, err
		}
		set := fields.Set{"metadata.name": m.GetName(), "metadata.namespace": m.GetNamespace()}
		if fs := sel.Load(); fs != nil {
			var content map[string]any
			if u, ok := obj.(*unstructured.Unstructured); ok {
				content = u.Object
			}
			for _, f := range *fs {
				set[f.label] = selectorValue(content, f.path)
			}
		}
		return labels.Set(m.GetLabels()), set, nil
	}
}

func selectorValue(obj map[string]any, path []string) string {
	v, found, err := unstructured.NestedFieldNoCopy(obj, path...)
	if err != nil || !found {
		return ""
	}
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}
