package policy

import (
	"strconv"
	"strings"

	policyv1 "k8s.io/api/policy/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
)

var supportedUnhealthyPodEvictionPolicies = sets.New(string(policyv1.IfHealthyBudget), string(policyv1.AlwaysAllow))

// Options relax PodDisruptionBudget validation.
type Options struct {
	// AllowInvalidLabelValueInSelector accepts selector values that are not
	// valid label values (an update of a budget stored with one).
	AllowInvalidLabelValueInSelector bool
}

var (
	metadataPath = field.NewPath("metadata")
	specPath     = field.NewPath("spec")
)

// ValidatePodDisruptionBudget checks a budget, its metadata included.
func ValidatePodDisruptionBudget(pdb *policyv1.PodDisruptionBudget, opts Options) field.ErrorList {
	allErrs := validation.ValidateObjectMeta(&pdb.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	return append(allErrs, ValidatePodDisruptionBudgetSpec(pdb.Spec, opts, specPath)...)
}

// ValidatePodDisruptionBudgetFields checks a new or updated budget but for
// the generic metadata rules (create and update check the same).
func ValidatePodDisruptionBudgetFields(pdb *policyv1.PodDisruptionBudget, opts Options) field.ErrorList {
	allErrs := validation.ValidateKubeFinalizerNames(pdb.Finalizers, metadataPath.Child("finalizers"))
	return append(allErrs, ValidatePodDisruptionBudgetSpec(pdb.Spec, opts, specPath)...)
}

// ValidatePodDisruptionBudgetSpec checks a budget's spec: at most one of
// minAvailable and maxUnavailable, each a non-negative integer or a
// percentage up to 100%, a valid selector, a supported
// unhealthyPodEvictionPolicy.
func ValidatePodDisruptionBudgetSpec(spec policyv1.PodDisruptionBudgetSpec, opts Options, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.MinAvailable != nil && spec.MaxUnavailable != nil {
		allErrs = append(allErrs, field.Invalid(fldPath, spec, "minAvailable and maxUnavailable cannot be both set"))
	}
	if spec.MinAvailable != nil {
		allErrs = append(allErrs, ValidatePositiveIntOrPercent(*spec.MinAvailable, fldPath.Child("minAvailable"))...)
		allErrs = append(allErrs, IsNotMoreThan100Percent(*spec.MinAvailable, fldPath.Child("minAvailable"))...)
	}
	if spec.MaxUnavailable != nil {
		allErrs = append(allErrs, ValidatePositiveIntOrPercent(*spec.MaxUnavailable, fldPath.Child("maxUnavailable"))...)
		allErrs = append(allErrs, IsNotMoreThan100Percent(*spec.MaxUnavailable, fldPath.Child("maxUnavailable"))...)
	}
	allErrs = append(allErrs, metav1validation.ValidateLabelSelector(spec.Selector,
		metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.AllowInvalidLabelValueInSelector},
		fldPath.Child("selector"))...)
	if p := spec.UnhealthyPodEvictionPolicy; p != nil && !supportedUnhealthyPodEvictionPolicies.Has(string(*p)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("unhealthyPodEvictionPolicy"), *p, sets.List(supportedUnhealthyPodEvictionPolicies)))
	}
	return allErrs
}

// ValidatePodDisruptionBudgetStatusUpdate checks a budget's new status:
// valid conditions and non-negative counts.
func ValidatePodDisruptionBudgetStatusUpdate(status policyv1.PodDisruptionBudgetStatus, fldPath *field.Path) field.ErrorList {
	allErrs := metav1validation.ValidateConditions(status.Conditions, fldPath.Child("conditions"))
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(status.DisruptionsAllowed), fldPath.Child("disruptionsAllowed"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(status.CurrentHealthy), fldPath.Child("currentHealthy"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(status.DesiredHealthy), fldPath.Child("desiredHealthy"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(status.ExpectedPods), fldPath.Child("expectedPods"))...)
	return allErrs
}

// ValidatePositiveIntOrPercent is apps' check: a non-negative integer, or
// a string that is a percentage.
func ValidatePositiveIntOrPercent(v intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	switch v.Type {
	case intstr.String:
		var allErrs field.ErrorList
		for _, msg := range utilvalidation.IsValidPercent(v.StrVal) {
			allErrs = append(allErrs, field.Invalid(fldPath, v, msg))
		}
		return allErrs
	case intstr.Int:
		return apimachineryvalidation.ValidateNonnegativeField(int64(v.IntValue()), fldPath)
	}
	return field.ErrorList{field.Invalid(fldPath, v, "must be an integer or percentage (e.g '5%')")}
}

// IsNotMoreThan100Percent is apps' check: a percentage is at most 100%.
func IsNotMoreThan100Percent(v intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	if v.Type != intstr.String || !strings.HasSuffix(v.StrVal, "%") {
		return nil
	}
	n, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	if err != nil || n <= 100 {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath, v, "must not be greater than 100%")}
}
