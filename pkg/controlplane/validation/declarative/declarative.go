// Package declarative builds the errors kube-apiserver v1.37 answers from
// its declarative validation (k8s.io/kubernetes pkg/apis/*/v1/
// zz_generated.validations.go, validators in k8s.io/apimachinery
// pkg/api/validate) in place of the handwritten ones it marks covered: in
// the declarative validators' words, marked with
// field.Error.MarkCoveredByDeclarative so that the generic store lists them
// after the other errors, in the declarative validators' order (see
// pkg/registry/generic/declarative.go). They are also marked beta, the
// level of the rules kapi mirrors: upstream drops a covered handwritten
// error only for a matching beta declarative error
// (validate.FilterCoveredHandwrittenErrors), and apimachinery's own
// handwritten metadata validation marks errors covered whose rules are
// alpha, so "covered" alone does not mean "answered declaratively". Use them
// only where upstream's rule is beta; an alpha rule leaves the handwritten
// error authoritative and in place.
package declarative

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Required is validate.RequiredValue/RequiredSlice/RequiredPointer's error:
// "Required value", without detail.
func Required(fldPath *field.Path) *field.Error {
	return field.Required(fldPath, "").MarkCoveredByDeclarative().MarkBeta()
}

// Immutable is validate.Immutable's error: no value, origin "immutable"
// ("Invalid value: null: field is immutable").
func Immutable(fldPath *field.Path) *field.Error {
	return field.Invalid(fldPath, nil, "field is immutable").WithOrigin("immutable").MarkCoveredByDeclarative().MarkBeta()
}

// Minimum is validate.Minimum's error: the value, origin "minimum".
func Minimum[T int32 | int64](fldPath *field.Path, value, min T) *field.Error {
	return field.Invalid(fldPath, value, fmt.Sprintf("must be greater than or equal to %d", min)).WithOrigin("minimum").MarkCoveredByDeclarative().MarkBeta()
}

// Forbidden is validate.ForbiddenPointer/ForbiddenSlice's error:
// "Forbidden", without detail.
func Forbidden(fldPath *field.Path) *field.Error {
	return field.Forbidden(fldPath, "").MarkCoveredByDeclarative().MarkBeta()
}

// Covered marks errs, already worded as upstream's declarative validator
// words them, as answered by it.
func Covered(errs field.ErrorList) field.ErrorList {
	return errs.MarkCoveredByDeclarative().MarkBeta()
}
