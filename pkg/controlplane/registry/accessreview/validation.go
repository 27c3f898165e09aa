package accessreview

import (
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateSubjectAccessReviewSpec checks spec as upstream does: exactly one
// of resourceAttributes and nonResourceAttributes, a user or a group, and
// well-formed field and label selectors.
func ValidateSubjectAccessReviewSpec(spec authorizationv1.SubjectAccessReviewSpec, fldPath *field.Path) field.ErrorList {
	errs := validateAttributesChoice(spec.ResourceAttributes, spec.NonResourceAttributes, fldPath)
	if len(spec.User) == 0 && len(spec.Groups) == 0 {
		errs = append(errs, field.Invalid(fldPath.Child("user"), spec.User, `at least one of user or group must be specified`))
	}
	return append(errs, validateResourceAttributes(spec.ResourceAttributes, fldPath.Child("resourceAttributes"))...)
}

// ValidateSelfSubjectAccessReviewSpec is ValidateSubjectAccessReviewSpec
// without a subject (the requester is the subject).
func ValidateSelfSubjectAccessReviewSpec(spec authorizationv1.SelfSubjectAccessReviewSpec, fldPath *field.Path) field.ErrorList {
	errs := validateAttributesChoice(spec.ResourceAttributes, spec.NonResourceAttributes, fldPath)
	return append(errs, validateResourceAttributes(spec.ResourceAttributes, fldPath.Child("resourceAttributes"))...)
}

// ValidateSubjectAccessReview checks the spec and that metadata is empty
// (managed fields aside).
func ValidateSubjectAccessReview(sar *authorizationv1.SubjectAccessReview) field.ErrorList {
	errs := ValidateSubjectAccessReviewSpec(sar.Spec, field.NewPath("spec"))
	if !emptyMeta(sar.ObjectMeta, false) {
		errs = append(errs, field.Invalid(field.NewPath("metadata"), sar.ObjectMeta, `must be empty`))
	}
	return errs
}

// ValidateSelfSubjectAccessReview checks the spec and that metadata is
// empty (managed fields aside).
func ValidateSelfSubjectAccessReview(sar *authorizationv1.SelfSubjectAccessReview) field.ErrorList {
	errs := ValidateSelfSubjectAccessReviewSpec(sar.Spec, field.NewPath("spec"))
	if !emptyMeta(sar.ObjectMeta, false) {
		errs = append(errs, field.Invalid(field.NewPath("metadata"), sar.ObjectMeta, `must be empty`))
	}
	return errs
}

// ValidateLocalSubjectAccessReview checks the spec, that metadata holds
// nothing but the namespace, that resourceAttributes.namespace is that
// namespace, and that nonResourceAttributes are absent.
func ValidateLocalSubjectAccessReview(sar *authorizationv1.LocalSubjectAccessReview) field.ErrorList {
	errs := ValidateSubjectAccessReviewSpec(sar.Spec, field.NewPath("spec"))
	if !emptyMeta(sar.ObjectMeta, true) {
		errs = append(errs, field.Invalid(field.NewPath("metadata"), sar.ObjectMeta, `must be empty except for namespace`))
	}
	if ra := sar.Spec.ResourceAttributes; ra != nil && ra.Namespace != sar.Namespace {
		errs = append(errs, field.Invalid(field.NewPath("spec.resourceAttributes.namespace"), ra.Namespace, `must match metadata.namespace`))
	}
	if sar.Spec.NonResourceAttributes != nil {
		nra := sar.Spec.NonResourceAttributes
		errs = append(errs, field.Invalid(field.NewPath("spec.nonResourceAttributes"), internalNonResourceAttributes{Path: nra.Path, Verb: nra.Verb}, `disallowed on this kind of request`))
	}
	return errs
}

func validateAttributesChoice(ra *authorizationv1.ResourceAttributes, nra *authorizationv1.NonResourceAttributes, fldPath *field.Path) field.ErrorList {
	// As v1.37's ValidateSubjectAccessReviewSpec: one error at the spec,
	// whose value is the nonResourceAttributes as upstream's internal type
	// prints them (no JSON tags: {"Path":...,"Verb":...}).
	if (ra == nil) != (nra == nil) {
		return nil
	}
	var value any
	if nra != nil {
		value = internalNonResourceAttributes{Path: nra.Path, Verb: nra.Verb}
	}
	return field.ErrorList{field.Invalid(fldPath, value, `exactly one of nonResourceAttributes or resourceAttributes must be specified`)}
}

// internalNonResourceAttributes is authorization's internal
// NonResourceAttributes, whose fields upstream's errors print untagged.
type internalNonResourceAttributes struct {
	Path string
	Verb string
}

// emptyMeta reports whether m is empty but for managed fields (which the
// create handler records) and, if allowNamespace, the namespace.
func emptyMeta(m metav1.ObjectMeta, allowNamespace bool) bool {
	m.ManagedFields = nil
	if allowNamespace {
		m.Namespace = ""
	}
	return equality.Semantic.DeepEqual(metav1.ObjectMeta{}, m)
}

func validateResourceAttributes(ra *authorizationv1.ResourceAttributes, fldPath *field.Path) field.ErrorList {
	if ra == nil {
		return nil
	}
	var errs field.ErrorList
	if s := ra.FieldSelector; s != nil {
		p := fldPath.Child("fieldSelector")
		errs = append(errs, validateSelectorChoice(s.RawSelector, len(s.Requirements), p)...)
		// Unknown operators pass: a newer client may know operators this
		// server does not; the requirement is then ignored (see
		// evaluationError), which only widens the check.
		opts := metav1validation.FieldSelectorValidationOptions{AllowUnknownOperatorInRequirement: true}
		for i, r := range s.Requirements {
			errs = append(errs, metav1validation.ValidateFieldSelectorRequirement(r, opts, p.Child("requirements").Index(i))...)
		}
	}
	if s := ra.LabelSelector; s != nil {
		p := fldPath.Child("labelSelector")
		errs = append(errs, validateSelectorChoice(s.RawSelector, len(s.Requirements), p)...)
		opts := metav1validation.LabelSelectorValidationOptions{AllowUnknownOperatorInRequirement: true}
		for i, r := range s.Requirements {
			errs = append(errs, metav1validation.ValidateLabelSelectorRequirement(r, opts, p.Child("requirements").Index(i))...)
		}
	}
	return errs
}

func validateSelectorChoice(raw string, requirements int, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if raw != "" && requirements > 0 {
		errs = append(errs, field.Invalid(fldPath.Child("rawSelector"), raw, "may not specified at the same time as requirements"))
	}
	if raw == "" && requirements == 0 {
		errs = append(errs, field.Required(fldPath.Child("requirements"), fmt.Sprintf("when %s is specified, requirements or rawSelector is required", fldPath)))
	}
	return errs
}
