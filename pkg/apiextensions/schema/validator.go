package schema

import (
	"encoding/json"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	openapierrors "k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// Validator validates custom resources against one version's schema. It
// is safe for concurrent use.
type Validator struct {
	// sv validates against the schema. It is built once and shared, as
	// upstream's CRD handler shares one per version: kube-openapi's
	// SchemaValidator keeps no state between calls of Validate (the
	// validators of properties and items it makes are new per call; the
	// only writer of its fields, SetPath, is called on those).
	sv *validate.SchemaValidator
}

// NewValidator returns the validator of schema in; nil (which accepts
// everything) when in is nil.
func NewValidator(in *apiextensionsv1.JSONSchemaProps) (*Validator, error) {
	s, err := ToOpenAPI(in)
	if err != nil || s == nil {
		return nil, err
	}
	return &Validator{sv: validate.NewSchemaValidator(s, nil, "", strfmt.Default)}, nil
}

// Validate returns obj's schema errors as field errors, shaped as
// upstream's (Required, NotSupported, TooLong, TooMany, TypeInvalid,
// Invalid).
func (v *Validator) Validate(obj map[string]any) field.ErrorList {
	return v.validateValue(obj)
}

// validateValue is Validate for any JSON value (a default, say).
func (v *Validator) validateValue(obj any) field.ErrorList {
	if v == nil {
		return nil
	}
	res := v.sv.Validate(obj)
	if res == nil {
		return nil
	}
	return toFieldErrors(res.Errors)
}

func toFieldErrors(errs []error) field.ErrorList {
	var out field.ErrorList
	for _, err := range errs {
		ve, ok := err.(*openapierrors.Validation)
		if !ok {
			if ce, ok := err.(*openapierrors.CompositeError); ok {
				out = append(out, toFieldErrors(ce.Errors)...)
				continue
			}
			out = append(out, field.Invalid(nil, "", err.Error()))
			continue
		}
		p := fieldPath(ve.Name)
		value := ve.Value
		if value == nil {
			value = ""
		}
		switch ve.Code() {
		case openapierrors.RequiredFailCode:
			out = append(out, field.Required(p, ""))
		case openapierrors.EnumFailCode:
			var allowed []string
			for _, a := range ve.Values {
				if s, ok := a.(string); ok {
					allowed = append(allowed, s)
					continue
				}
				b, _ := json.Marshal(a)
				allowed = append(allowed, string(b))
			}
			out = append(out, field.NotSupported(p, ve.Value, allowed))
		case openapierrors.TooLongFailCode:
			limit := -1
			if n, ok := ve.Valid.(int64); ok {
				limit = int(n)
			}
			out = append(out, field.TooLong(p, "", limit))
		case openapierrors.MaxItemsFailCode, openapierrors.TooManyPropertiesCode:
			// Both are TooMany upstream ("must have at most N items", for
			// maxProperties too: apiextensions-apiserver v0.37.2
			// kubeOpenAPIResultToFieldErrors).
			actual, limit := -1, -1
			if n, ok := ve.Value.(int64); ok {
				actual = int(n)
			}
			if n, ok := ve.Valid.(int64); ok {
				limit = int(n)
			}
			out = append(out, field.TooMany(p, actual, limit))
		case openapierrors.InvalidTypeCode:
			out = append(out, field.TypeInvalid(p, value, ve.Error()))
		default:
			out = append(out, field.Invalid(p, value, ve.Error()))
		}
	}
	return out
}

// fieldPath turns a validator path (".spec.replicas") into the field path
// upstream reports (one element holding the whole dotted path); the root
// is nil.
func fieldPath(name string) *field.Path {
	if name == "" || name == "." {
		return nil
	}
	return field.NewPath(strings.TrimPrefix(name, "."))
}

// ValidateUnder validates value, the field at path (one dotted element,
// "status") of a custom resource, against v, that field's schema s;
// unchanged values of old ratchet as in ValidateUpdate (old nil: none).
// The errors' paths are under path, their messages relative to the field
// ("replicas in body must be ..."), as upstream's validation of a status
// update, which validates the status alone against its schema
// (apiextensions-apiserver v0.37 customResourceValidator.ValidateStatusUpdate).
func (v *Validator) ValidateUnder(path string, value, old any, s *apiextensionsv1.JSONSchemaProps) field.ErrorList {
	if v == nil {
		return nil
	}
	var errs field.ErrorList
	m, isMap := value.(map[string]any)
	om, oldIsMap := old.(map[string]any)
	switch {
	case isMap && oldIsMap:
		errs = v.ValidateUpdate(m, om, s)
	default:
		errs = v.validateValue(value)
	}
	for _, e := range errs {
		if e.Field == "" || e.Field == "<nil>" {
			e.Field = path
		} else {
			e.Field = path + "." + e.Field
		}
	}
	return errs
}
