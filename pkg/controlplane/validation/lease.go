package validation

import (
	"slices"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateLeaseName checks a lease name: a DNS-1123 subdomain.
var ValidateLeaseName = apimachineryvalidation.NameIsDNSSubdomain

// validLeaseStrategies are the coordinated lease strategies without a
// domain prefix.
var validLeaseStrategies = []coordinationv1.CoordinatedLeaseStrategy{coordinationv1.OldestEmulationVersion}

// ValidateLease checks a new lease: metadata (apimachinery's rules only,
// as upstream's coordination validation) and [ValidateLeaseFields].
func ValidateLease(l *coordinationv1.Lease) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&l.ObjectMeta, true, ValidateLeaseName, metadataPath)
	return append(allErrs, ValidateLeaseFields(l)...)
}

// ValidateLeaseFields checks a lease's spec: leaseDurationSeconds > 0 and
// leaseTransitions >= 0 when set, a known or qualified strategy, and
// preferredHolder only together with a strategy. holderIdentity, acquireTime
// and renewTime need no check.
func ValidateLeaseFields(l *coordinationv1.Lease) field.ErrorList {
	return ValidateLeaseSpec(&l.Spec, field.NewPath("spec"))
}

// ValidateLeaseSpec checks a lease spec at fldPath.
func ValidateLeaseSpec(spec *coordinationv1.LeaseSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.LeaseDurationSeconds != nil && *spec.LeaseDurationSeconds <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("leaseDurationSeconds"), *spec.LeaseDurationSeconds, "must be greater than 0"))
	}
	if spec.LeaseTransitions != nil && *spec.LeaseTransitions < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("leaseTransitions"), *spec.LeaseTransitions, "must be greater than or equal to 0"))
	}
	if spec.Strategy != nil {
		allErrs = append(allErrs, validateCoordinatedLeaseStrategy(*spec.Strategy, fldPath.Child("strategy"))...)
	}
	if spec.PreferredHolder != nil && *spec.PreferredHolder != "" && (spec.Strategy == nil || *spec.Strategy == "") {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("preferredHolder"), "may only be specified if `strategy` is defined"))
	}
	return allErrs
}

// validateCoordinatedLeaseStrategy accepts kube's strategies and
// domain-qualified ones. As upstream, errors are reported one level below
// fldPath ("spec.strategy.strategy").
func validateCoordinatedLeaseStrategy(s coordinationv1.CoordinatedLeaseStrategy, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(strings.Split(string(s), "/")) == 1 {
		if !slices.Contains(validLeaseStrategies, s) {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("strategy"), s, validLeaseStrategies))
		}
		return allErrs
	}
	for _, msg := range validation.IsQualifiedName(string(s)) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("strategy"), s, msg))
	}
	return allErrs
}

// ValidateLeaseUpdate checks an update: metadata update rules and the new
// spec.
func ValidateLeaseUpdate(newL, oldL *coordinationv1.Lease) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newL.ObjectMeta, &oldL.ObjectMeta, metadataPath)
	return append(allErrs, ValidateLeaseFields(newL)...)
}

// ValidateLeaseUpdateFields checks an update but for the generic metadata
// rules.
func ValidateLeaseUpdateFields(newL, _ *coordinationv1.Lease) field.ErrorList {
	return ValidateLeaseFields(newL)
}
