package apps

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
)

// ValidateDaemonSetName is the rule for daemonset names: DNS subdomains.
var ValidateDaemonSetName = apimachineryvalidation.NameIsDNSSubdomain

// ValidateDaemonSetSpec checks a daemonset's spec. Unlike the other
// workloads, a missing selector is not reported as Required: it selects
// nothing, so the template's labels do not match it.
func ValidateDaemonSetSpec(spec *appsv1.DaemonSetSpec, fldPath *field.Path, opts PodValidationOptions) field.ErrorList {
	selOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.AllowInvalidLabelValueInSelector}
	allErrs := metav1validation.ValidateLabelSelector(spec.Selector, selOpts, fldPath.Child("selector"))
	if selector, err := metav1.LabelSelectorAsSelector(spec.Selector); err == nil && !selector.Matches(labels.Set(spec.Template.Labels)) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("template", "metadata", "labels"), spec.Template.Labels, selectorMismatchMsg))
	}
	if spec.Selector != nil && len(spec.Selector.MatchLabels)+len(spec.Selector.MatchExpressions) == 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("selector"), spec.Selector, "empty selector is invalid for daemonset"))
	}
	allErrs = append(allErrs, validatePodTemplate(&spec.Template, fldPath.Child("template"), opts)...)
	allErrs = append(allErrs, validateAlwaysRestart(&spec.Template.Spec, fldPath.Child("template", "spec"), "DaemonSet")...)
	allErrs = append(allErrs, nonNegative(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))...)
	allErrs = append(allErrs, ValidateDaemonSetUpdateStrategy(&spec.UpdateStrategy, fldPath.Child("updateStrategy"))...)
	if spec.RevisionHistoryLimit != nil {
		// zero is a valid revisionHistoryLimit
		allErrs = append(allErrs, nonNegative(int64(*spec.RevisionHistoryLimit), fldPath.Child("revisionHistoryLimit"))...)
	}
	return allErrs
}

// ValidateDaemonSetUpdateStrategy checks the update strategy: OnDelete, or
// RollingUpdate with a valid rollingUpdate block.
func ValidateDaemonSetUpdateStrategy(s *appsv1.DaemonSetUpdateStrategy, fldPath *field.Path) field.ErrorList {
	switch s.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
	case appsv1.RollingUpdateDaemonSetStrategyType:
		if s.RollingUpdate == nil {
			return field.ErrorList{field.Required(fldPath.Child("rollingUpdate"), "")}
		}
		return ValidateRollingUpdateDaemonSet(s.RollingUpdate, fldPath.Child("rollingUpdate"))
	default:
		return field.ErrorList{field.NotSupported(fldPath, s, []string{string(appsv1.RollingUpdateDaemonSetStrategyType), string(appsv1.OnDeleteDaemonSetStrategyType)})}
	}
	return nil
}

// ValidateRollingUpdateDaemonSet checks maxUnavailable and maxSurge: valid
// integers or percentages, at most 100%, exactly one of them non-zero.
func ValidateRollingUpdateDaemonSet(ru *appsv1.RollingUpdateDaemonSet, fldPath *field.Path) field.ErrorList {
	maxUnavailable, maxSurge := intOrZero(ru.MaxUnavailable), intOrZero(ru.MaxSurge)
	allErrs := ValidatePositiveIntOrPercent(maxUnavailable, fldPath.Child("maxUnavailable"))
	allErrs = append(allErrs, ValidatePositiveIntOrPercent(maxSurge, fldPath.Child("maxSurge"))...)
	allErrs = append(allErrs, IsNotMoreThan100Percent(maxUnavailable, fldPath.Child("maxUnavailable"))...)
	allErrs = append(allErrs, IsNotMoreThan100Percent(maxSurge, fldPath.Child("maxSurge"))...)
	hasUnavailable, hasSurge := intOrPercentValue(maxUnavailable) != 0, intOrPercentValue(maxSurge) != 0
	switch {
	case hasUnavailable && hasSurge:
		allErrs = append(allErrs, field.Invalid(fldPath.Child("maxSurge"), maxSurge, "may not be set when maxUnavailable is non-zero"))
	case !hasUnavailable && !hasSurge:
		allErrs = append(allErrs, field.Required(fldPath.Child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
	}
	return allErrs
}

// TemplateGeneration returns the daemonset's template generation: upstream
// keeps it in the internal spec and serves it in apps/v1 as the
// annotation deprecated.daemonset.template.generation. ok is false when
// the annotation is missing; err is set when it is not an integer.
func TemplateGeneration(ds *appsv1.DaemonSet) (gen int64, ok bool, err error) {
	v, ok := ds.Annotations[appsv1.DeprecatedTemplateGeneration]
	if !ok {
		return 0, false, nil
	}
	gen, err = strconv.ParseInt(v, 10, 64)
	return gen, true, err
}

// CheckDaemonSetConversion returns the error kube-apiserver's conversion
// of an apps/v1 DaemonSet to its internal version returns (nil for any
// other object): a template generation annotation that is not an int64,
// strconv's bare error (Convert_v1_DaemonSet_To_apps_DaemonSet,
// k8s.io/kubernetes pkg/apis/apps/v1/conversion.go, v1.37.2).
func CheckDaemonSetConversion(obj runtime.Object) error {
	ds, ok := obj.(*appsv1.DaemonSet)
	if !ok {
		return nil
	}
	_, _, err := TemplateGeneration(ds)
	return err
}

// validateTemplateGeneration reports an annotation that is not an integer
// (upstream fails to decode such an object: requests carrying one are
// refused before validation, CheckDaemonSetConversion; the Invalid here is
// for in-process writers) and a negative one (upstream's
// spec.templateGeneration rule).
func validateTemplateGeneration(ds *appsv1.DaemonSet) field.ErrorList {
	gen, ok, err := TemplateGeneration(ds)
	switch {
	case !ok:
		return nil
	case err != nil:
		return field.ErrorList{field.Invalid(metadataPath.Child("annotations").Key(appsv1.DeprecatedTemplateGeneration),
			ds.Annotations[appsv1.DeprecatedTemplateGeneration], err.Error())}
	}
	return nonNegative(gen, specPath.Child("templateGeneration"))
}

// ValidateDaemonSetFields checks a new daemonset but for the generic
// metadata rules.
func ValidateDaemonSetFields(ds *appsv1.DaemonSet, opts PodValidationOptions) field.ErrorList {
	allErrs := metaFields(&ds.ObjectMeta)
	allErrs = append(allErrs, ValidateDaemonSetSpec(&ds.Spec, specPath, opts)...)
	return append(allErrs, validateTemplateGeneration(ds)...)
}

// ValidateDaemonSet checks a new daemonset.
func ValidateDaemonSet(ds *appsv1.DaemonSet, opts PodValidationOptions) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&ds.ObjectMeta, true, ValidateDaemonSetName, metadataPath)
	return append(allErrs, ValidateDaemonSetFields(ds, opts)...)
}

// ValidateDaemonSetUpdateFields checks an update of a daemonset but for the
// generic metadata rules: the new spec is valid, the selector did not
// change, and the template generation moved with the template (the
// strategy sets it; a client cannot).
//
// In upstream's order (ValidateDaemonSetUpdate, v1.37): the update's own
// rules (template generation, selector) before the new spec's.
func ValidateDaemonSetUpdateFields(ds, old *appsv1.DaemonSet, opts PodValidationOptions) field.ErrorList {
	allErrs := metaFields(&ds.ObjectMeta)
	allErrs = append(allErrs, validateTemplateGenerationUpdate(ds, old)...)
	allErrs = append(allErrs, validation.ValidateImmutableField(ds.Spec.Selector, old.Spec.Selector, specPath.Child("selector"))...)
	allErrs = append(allErrs, ValidateDaemonSetSpec(&ds.Spec, specPath, opts)...)
	return append(allErrs, validateTemplateGeneration(ds)...)
}

// validateTemplateGenerationUpdate is upstream's templateGeneration rule:
// never decremented, incremented exactly when the template changes.
func validateTemplateGenerationUpdate(ds, old *appsv1.DaemonSet) field.ErrorList {
	gen, _, errNew := TemplateGeneration(ds)
	oldGen, _, errOld := TemplateGeneration(old)
	if errNew != nil || errOld != nil {
		return nil // reported by validateTemplateGeneration
	}
	p := specPath.Child("templateGeneration")
	if gen < oldGen {
		return field.ErrorList{field.Invalid(p, gen, "must not be decremented")}
	}
	templateUpdated := !templatesEqual(&ds.Spec.Template, &old.Spec.Template)
	switch {
	case gen == oldGen && templateUpdated:
		return field.ErrorList{field.Invalid(p, gen, "must be incremented upon template update")}
	case gen > oldGen && !templateUpdated:
		return field.ErrorList{field.Invalid(p, gen, "must not be incremented without template update")}
	}
	return nil
}

// ValidateDaemonSetUpdate checks an update of a daemonset.
func ValidateDaemonSetUpdate(ds, old *appsv1.DaemonSet, opts PodValidationOptions) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&ds.ObjectMeta, &old.ObjectMeta, metadataPath)
	return append(allErrs, ValidateDaemonSetUpdateFields(ds, old, opts)...)
}

// ValidateDaemonSetStatus checks a daemonset's status: counts not negative.
func ValidateDaemonSetStatus(s *appsv1.DaemonSetStatus, fldPath *field.Path) field.ErrorList {
	allErrs := nonNegative(int64(s.CurrentNumberScheduled), fldPath.Child("currentNumberScheduled"))
	allErrs = append(allErrs, nonNegative(int64(s.NumberMisscheduled), fldPath.Child("numberMisscheduled"))...)
	allErrs = append(allErrs, nonNegative(int64(s.DesiredNumberScheduled), fldPath.Child("desiredNumberScheduled"))...)
	allErrs = append(allErrs, nonNegative(int64(s.NumberReady), fldPath.Child("numberReady"))...)
	allErrs = append(allErrs, nonNegative(s.ObservedGeneration, fldPath.Child("observedGeneration"))...)
	allErrs = append(allErrs, nonNegative(int64(s.UpdatedNumberScheduled), fldPath.Child("updatedNumberScheduled"))...)
	allErrs = append(allErrs, nonNegative(int64(s.NumberAvailable), fldPath.Child("numberAvailable"))...)
	allErrs = append(allErrs, nonNegative(int64(s.NumberUnavailable), fldPath.Child("numberUnavailable"))...)
	if s.CollisionCount != nil {
		allErrs = append(allErrs, nonNegative(int64(*s.CollisionCount), fldPath.Child("collisionCount"))...)
	}
	return allErrs
}

// ValidateDaemonSetStatusUpdateFields checks a /status update but for the
// generic metadata rules.
func ValidateDaemonSetStatusUpdateFields(ds, old *appsv1.DaemonSet) field.ErrorList {
	allErrs := metaFields(&ds.ObjectMeta)
	allErrs = append(allErrs, ValidateDaemonSetStatus(&ds.Status, statusPath)...)
	return append(allErrs, validateCollisionCountUpdate(ds.Status.CollisionCount, old.Status.CollisionCount)...)
}
