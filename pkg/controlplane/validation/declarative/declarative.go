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
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	"k8s.io/apimachinery/pkg/util/sets"
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

// MaxItems is validate.MaxItems's error: "Too many: n: must have at most
// max items", origin "maxItems".
func MaxItems(fldPath *field.Path, n, max int) *field.Error {
	return field.TooMany(fldPath, n, max).WithOrigin("maxItems").MarkCoveredByDeclarative().MarkBeta()
}

// The format and length validators below are apimachinery's own
// (k8s.io/apimachinery/pkg/api/validate), which upstream's generated code
// calls: they read neither the context nor the operation.
var createOp = operation.Operation{Type: operation.Create}

// LongName is +k8s:format=k8s-long-name: a lowercase DNS subdomain.
func LongName(fldPath *field.Path, value string) field.ErrorList {
	return Covered(validate.LongName(context.Background(), createOp, fldPath, &value, nil))
}

// LongNameCaseless is +k8s:format=k8s-long-name-caseless: a DNS
// subdomain, letters of either case.
func LongNameCaseless(fldPath *field.Path, value string) field.ErrorList {
	return Covered(validate.LongNameCaseless(context.Background(), createOp, fldPath, &value, nil))
}

// MaxLength is +k8s:maxLength: at most max characters.
func MaxLength(fldPath *field.Path, value string, max int) field.ErrorList {
	return Covered(validate.MaxLength(context.Background(), createOp, fldPath, &value, nil, max))
}

// ExtendedResourceName is +k8s:format=k8s-extended-resource-name.
func ExtendedResourceName(fldPath *field.Path, value string) field.ErrorList {
	return Covered(validate.ExtendedResourceName(context.Background(), createOp, fldPath, &value, nil))
}

// LabelKey is +k8s:format=k8s-label-key.
func LabelKey(fldPath *field.Path, value string) field.ErrorList {
	return Covered(validate.LabelKey(context.Background(), createOp, fldPath, &value, nil))
}

// ResourceFullyQualifiedName is
// +k8s:format=k8s-resource-fully-qualified-name: "<domain>/<identifier>".
func ResourceFullyQualifiedName(fldPath *field.Path, value string) field.ErrorList {
	return Covered(validate.ResourceFullyQualifiedName(context.Background(), createOp, fldPath, &value, nil))
}

// Enum is +k8s:enum: "Unsupported value", the valid values sorted.
func Enum[T ~string](fldPath *field.Path, value T, valid ...T) field.ErrorList {
	return Covered(validate.Enum(context.Background(), createOp, fldPath, &value, nil, sets.New(valid...), nil))
}

// Unique is +k8s:listType=set/map uniqueness (validate.ValSliceUnique): a
// "Duplicate value" on each later item match says equals an earlier one,
// the whole item as the value.
func Unique[T any](fldPath *field.Path, list []T, match func(a, b *T) bool) field.ErrorList {
	return Covered(validate.ValSliceUnique(context.Background(), createOp, fldPath, list, nil, match))
}

// Covered marks errs, already worded as upstream's declarative validator
// words them, as answered by it.
func Covered(errs field.ErrorList) field.ErrorList {
	return errs.MarkCoveredByDeclarative().MarkBeta()
}
