package schema

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateEmbeddedResources checks the x-kubernetes-embedded-resource
// objects inside obj, a custom resource, against its structural schema s,
// as upstream's schemaobjectmeta.Validate with isResourceRoot false
// (apiextensions-apiserver v0.37 pkg/apiserver/schema/objectmeta): each
// has an apiVersion (a group-version) and a kind (a DNS-1035 label, in any
// case), and valid metadata (names that are path segments). The resource
// itself is not checked here (its type and object meta are elsewhere).
// Fields are walked sorted (upstream: in map order).
func ValidateEmbeddedResources(obj map[string]any, s *apiextensionsv1.JSONSchemaProps) field.ErrorList {
	if s == nil {
		return nil
	}
	root := *s
	root.XEmbeddedResource = false
	return validateEmbedded(nil, obj, &root)
}

func validateEmbedded(p *field.Path, x any, s *apiextensionsv1.JSONSchemaProps) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	switch x := x.(type) {
	case map[string]any:
		if s.XEmbeddedResource {
			errs = append(errs, validateEmbeddedResource(p, x)...)
		}
		if len(s.Properties) == 0 && AdditionalProperties(s) == nil {
			break // no schema for any field
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if ps, ok := propertySchema(s, k); ok {
				errs = append(errs, validateEmbedded(p.Child(k), x[k], ps)...)
			} else if add := AdditionalProperties(s); add != nil {
				errs = append(errs, validateEmbedded(p.Key(k), x[k], add)...)
			}
		}
	case []any:
		items := Items(s)
		for i, v := range x {
			errs = append(errs, validateEmbedded(p.Index(i), v, items)...)
		}
	}
	return errs
}

func validateEmbeddedResource(p *field.Path, x map[string]any) field.ErrorList {
	var errs field.ErrorList
	if _, ok := x["apiVersion"]; !ok {
		errs = append(errs, field.Required(p.Child("apiVersion"), ""))
	}
	if _, ok := x["kind"]; !ok {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	}
	for _, k := range slices.Sorted(maps.Keys(x)) {
		v := x[k]
		switch k {
		case "apiVersion":
			s, ok := v.(string)
			switch {
			case !ok:
				errs = append(errs, field.Invalid(p.Child("apiVersion"), v, "must be a string"))
			case s == "":
				errs = append(errs, field.Invalid(p.Child("apiVersion"), s, "must not be empty"))
			default:
				if _, err := schema.ParseGroupVersion(s); err != nil {
					errs = append(errs, field.Invalid(p.Child("apiVersion"), s, err.Error()))
				}
			}
		case "kind":
			s, ok := v.(string)
			switch {
			case !ok:
				errs = append(errs, field.Invalid(p.Child("kind"), v, "must be a string"))
			case s == "":
				errs = append(errs, field.Invalid(p.Child("kind"), s, "must not be empty"))
			default:
				if msgs := utilvalidation.IsDNS1035Label(strings.ToLower(s)); len(msgs) > 0 {
					errs = append(errs, field.Invalid(p.Child("kind"), s, "may have mixed case, but should otherwise match: "+strings.Join(msgs, ",")))
				}
			}
		case "metadata":
			meta, err := embeddedObjectMeta(v)
			if err != nil {
				errs = append(errs, field.Invalid(p.Child("metadata"), v, err.Error()))
				continue
			}
			if meta.Name == "" {
				meta.Name = "fakename" // as upstream: an embedded object may go without a name
			}
			errs = append(errs, apimachineryvalidation.ValidateObjectMeta(meta, meta.Namespace != "", pathSegmentName, p.Child("metadata"))...)
		}
	}
	return errs
}

// embeddedObjectMeta reads an embedded resource's metadata.
func embeddedObjectMeta(v any) (*metav1.ObjectMeta, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	meta := &metav1.ObjectMeta{}
	if err := json.Unmarshal(b, meta); err != nil {
		return nil, err
	}
	return meta, nil
}

// pathSegmentName is the name rule of embedded resources: usable as a
// path segment.
func pathSegmentName(name string, prefix bool) []string {
	if prefix {
		return content.IsPathSegmentPrefix(name)
	}
	return content.IsPathSegmentName(name)
}
