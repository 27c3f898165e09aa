package apps

import (
	"bytes"
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateControllerRevisionName is the rule for controllerrevision names:
// DNS subdomains.
var ValidateControllerRevisionName = apimachineryvalidation.NameIsDNSSubdomain

var dataPath = field.NewPath("data")

// hasData reports whether a revision carries data (upstream's internal
// type holds it as an object, nil when the JSON has none).
func hasData(d runtime.RawExtension) bool {
	if d.Object != nil {
		return true
	}
	raw := bytes.TrimSpace(d.Raw)
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// ValidateControllerRevisionFields checks a controllerrevision but for the
// generic metadata rules: data is required, revision is not negative.
func ValidateControllerRevisionFields(r *appsv1.ControllerRevision) field.ErrorList {
	allErrs := metaFields(&r.ObjectMeta)
	if !hasData(r.Data) {
		allErrs = append(allErrs, field.Required(dataPath, "data is mandatory"))
	}
	return append(allErrs, nonNegative(r.Revision, field.NewPath("revision"))...)
}

// ValidateControllerRevision checks a new controllerrevision.
func ValidateControllerRevision(r *appsv1.ControllerRevision) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&r.ObjectMeta, true, ValidateControllerRevisionName, field.NewPath("metadata"))
	return append(allErrs, ValidateControllerRevisionFields(r)...)
}

// ValidateControllerRevisionUpdateFields checks an update of a
// controllerrevision but for the generic metadata rules: data cannot
// change (compared as JSON values, so re-encoding it is no change).
func ValidateControllerRevisionUpdateFields(r, old *appsv1.ControllerRevision) field.ErrorList {
	allErrs := ValidateControllerRevisionFields(r)
	if !sameData(r.Data, old.Data) {
		allErrs = append(allErrs, field.Invalid(dataPath, r.Data, apimachineryvalidation.FieldImmutableErrorMsg))
	}
	return allErrs
}

// ValidateControllerRevisionUpdate checks an update of a controllerrevision.
func ValidateControllerRevisionUpdate(r, old *appsv1.ControllerRevision) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidateControllerRevisionUpdateFields(r, old)...)
}

// sameData compares two revisions' data as JSON values.
func sameData(a, b runtime.RawExtension) bool {
	va, errA := jsonValue(a)
	vb, errB := jsonValue(b)
	if errA != nil || errB != nil {
		return bytes.Equal(a.Raw, b.Raw)
	}
	return equality.Semantic.DeepEqual(va, vb)
}

func jsonValue(d runtime.RawExtension) (any, error) {
	raw := d.Raw
	if raw == nil && d.Object != nil {
		var err error
		if raw, err = json.Marshal(d.Object); err != nil {
			return nil, err
		}
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	var v any
	err := json.Unmarshal(raw, &v)
	return v, err
}
