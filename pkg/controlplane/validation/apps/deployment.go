package apps

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
)

// ValidateDeploymentName is the rule for deployment names: DNS subdomains.
var ValidateDeploymentName = apimachineryvalidation.NameIsDNSSubdomain

// ValidateDeploymentSpec checks a deployment's spec.
func ValidateDeploymentSpec(spec *appsv1.DeploymentSpec, fldPath *field.Path, opts PodValidationOptions) field.ErrorList {
	allErrs := nonNegative(int64(deref(spec.Replicas)), fldPath.Child("replicas"))
	allErrs = append(allErrs, validateRequiredSelector(spec.Selector, "deployment", fldPath.Child("selector"))...)
	if selector, err := metav1.LabelSelectorAsSelector(spec.Selector); err != nil {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("selector"), spec.Selector, "invalid label selector"))
	} else {
		allErrs = append(allErrs, ValidatePodTemplateSpecForReplicaSet(&spec.Template, selector, fldPath.Child("template"), opts)...)
	}
	allErrs = append(allErrs, ValidateDeploymentStrategy(&spec.Strategy, fldPath.Child("strategy"))...)
	allErrs = append(allErrs, nonNegative(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))...)
	if spec.RevisionHistoryLimit != nil {
		// zero is a valid revisionHistoryLimit
		allErrs = append(allErrs, nonNegative(int64(*spec.RevisionHistoryLimit), fldPath.Child("revisionHistoryLimit"))...)
	}
	if p := spec.ProgressDeadlineSeconds; p != nil {
		allErrs = append(allErrs, nonNegative(int64(*p), fldPath.Child("progressDeadlineSeconds"))...)
		if *p <= spec.MinReadySeconds {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("progressDeadlineSeconds"), *p, "must be greater than minReadySeconds"))
		}
	}
	return allErrs
}

// ValidateDeploymentStrategy checks the strategy: Recreate without a
// rollingUpdate block, or RollingUpdate with a valid one.
func ValidateDeploymentStrategy(s *appsv1.DeploymentStrategy, fldPath *field.Path) field.ErrorList {
	switch s.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if s.RollingUpdate != nil {
			return field.ErrorList{field.Forbidden(fldPath.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'")}
		}
	case appsv1.RollingUpdateDeploymentStrategyType:
		if s.RollingUpdate == nil {
			return field.ErrorList{field.Required(fldPath.Child("rollingUpdate"), "this should be defaulted and never be nil")}
		}
		return ValidateRollingUpdateDeployment(s.RollingUpdate, fldPath.Child("rollingUpdate"))
	default:
		return field.ErrorList{field.NotSupported(fldPath, s, []string{string(appsv1.RecreateDeploymentStrategyType), string(appsv1.RollingUpdateDeploymentStrategyType)})}
	}
	return nil
}

// ValidateRollingUpdateDeployment checks maxUnavailable and maxSurge: valid
// integers or percentages, not both zero, maxUnavailable at most 100%.
func ValidateRollingUpdateDeployment(ru *appsv1.RollingUpdateDeployment, fldPath *field.Path) field.ErrorList {
	maxUnavailable, maxSurge := intOrZero(ru.MaxUnavailable), intOrZero(ru.MaxSurge)
	allErrs := ValidatePositiveIntOrPercent(maxUnavailable, fldPath.Child("maxUnavailable"))
	allErrs = append(allErrs, ValidatePositiveIntOrPercent(maxSurge, fldPath.Child("maxSurge"))...)
	if intOrPercentValue(maxUnavailable) == 0 && intOrPercentValue(maxSurge) == 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("maxUnavailable"), maxUnavailable, "may not be 0 when `maxSurge` is 0"))
	}
	allErrs = append(allErrs, IsNotMoreThan100Percent(maxUnavailable, fldPath.Child("maxUnavailable"))...)
	return allErrs
}

// validateRollbackAnnotation checks the deprecated rollback annotation
// (deprecated.deployment.rollback.to), which upstream's conversion turns
// into spec.rollbackTo: an integer, not negative. An unparsable value fails
// upstream's decoding: requests carrying one are refused before validation
// (CheckDeploymentConversion); the Invalid here is for in-process writers.
func validateRollbackAnnotation(annotations map[string]string) field.ErrorList {
	rev, err := rollbackRevision(annotations)
	if err != nil {
		return field.ErrorList{field.Invalid(metadataPath.Child("annotations").Key(appsv1.DeprecatedRollbackTo),
			annotations[appsv1.DeprecatedRollbackTo], err.Error())}
	}
	return nonNegative(rev, specPath.Child("rollback", "version"))
}

// rollbackRevision parses the rollback annotation as upstream's conversion
// of an apps/v1 Deployment to its internal version does (0 when it is
// missing or empty), with its error.
func rollbackRevision(annotations map[string]string) (int64, error) {
	v := annotations[appsv1.DeprecatedRollbackTo]
	if v == "" {
		return 0, nil
	}
	rev, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("failed to parse annotation[%s]=%s as int64: %w", appsv1.DeprecatedRollbackTo, v, err)
	}
	return rev, nil
}

// CheckDeploymentConversion returns the error kube-apiserver's conversion
// of an apps/v1 Deployment to its internal version returns (nil for any
// other object): a rollback annotation that is not an int64
// (Convert_v1_Deployment_To_apps_Deployment, k8s.io/kubernetes
// pkg/apis/apps/v1/conversion.go, v1.37.2).
func CheckDeploymentConversion(obj runtime.Object) error {
	d, ok := obj.(*appsv1.Deployment)
	if !ok {
		return nil
	}
	_, err := rollbackRevision(d.Annotations)
	return err
}

// ValidateDeploymentFields checks a new deployment but for the generic
// metadata rules.
func ValidateDeploymentFields(d *appsv1.Deployment, opts PodValidationOptions) field.ErrorList {
	allErrs := metaFields(&d.ObjectMeta)
	allErrs = append(allErrs, ValidateDeploymentSpec(&d.Spec, specPath, opts)...)
	return append(allErrs, validateRollbackAnnotation(d.Annotations)...)
}

// ValidateDeployment checks a new deployment.
func ValidateDeployment(d *appsv1.Deployment, opts PodValidationOptions) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&d.ObjectMeta, true, ValidateDeploymentName, metadataPath)
	return append(allErrs, ValidateDeploymentFields(d, opts)...)
}

// ValidateDeploymentUpdateFields checks an update of a deployment but for
// the generic metadata rules: the new spec is valid and the selector did
// not change (apps/v1 selectors are immutable).
func ValidateDeploymentUpdateFields(d, old *appsv1.Deployment, opts PodValidationOptions) field.ErrorList {
	allErrs := ValidateDeploymentFields(d, opts)
	return append(allErrs, validation.ValidateImmutableField(d.Spec.Selector, old.Spec.Selector, specPath.Child("selector"))...)
}

// ValidateDeploymentUpdate checks an update of a deployment.
func ValidateDeploymentUpdate(d, old *appsv1.Deployment, opts PodValidationOptions) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&d.ObjectMeta, &old.ObjectMeta, metadataPath)
	return append(allErrs, ValidateDeploymentUpdateFields(d, old, opts)...)
}

// ValidateDeploymentStatus checks a deployment's status: counts not
// negative and consistent with status.replicas.
func ValidateDeploymentStatus(s *appsv1.DeploymentStatus, fldPath *field.Path) field.ErrorList {
	allErrs := nonNegative(s.ObservedGeneration, fldPath.Child("observedGeneration"))
	allErrs = append(allErrs, nonNegative(int64(s.Replicas), fldPath.Child("replicas"))...)
	allErrs = append(allErrs, nonNegative(int64(s.UpdatedReplicas), fldPath.Child("updatedReplicas"))...)
	allErrs = append(allErrs, nonNegative(int64(s.ReadyReplicas), fldPath.Child("readyReplicas"))...)
	allErrs = append(allErrs, nonNegative(int64(s.AvailableReplicas), fldPath.Child("availableReplicas"))...)
	allErrs = append(allErrs, nonNegative(int64(s.UnavailableReplicas), fldPath.Child("unavailableReplicas"))...)
	if s.TerminatingReplicas != nil {
		allErrs = append(allErrs, nonNegative(int64(*s.TerminatingReplicas), fldPath.Child("terminatingReplicas"))...)
	}
	if s.CollisionCount != nil {
		allErrs = append(allErrs, nonNegative(int64(*s.CollisionCount), fldPath.Child("collisionCount"))...)
	}
	if s.UpdatedReplicas > s.Replicas {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("updatedReplicas"), s.UpdatedReplicas, greaterThanReplicasMsg))
	}
	if s.ReadyReplicas > s.Replicas {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("readyReplicas"), s.ReadyReplicas, greaterThanReplicasMsg))
	}
	if s.AvailableReplicas > s.Replicas {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("availableReplicas"), s.AvailableReplicas, greaterThanReplicasMsg))
	}
	if s.AvailableReplicas > s.ReadyReplicas {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("availableReplicas"), s.AvailableReplicas, greaterThanReadyMsg))
	}
	return allErrs
}

// ValidateDeploymentStatusUpdateFields checks a /status update but for the
// generic metadata rules.
func ValidateDeploymentStatusUpdateFields(d, old *appsv1.Deployment) field.ErrorList {
	allErrs := metaFields(&d.ObjectMeta)
	allErrs = append(allErrs, ValidateDeploymentStatus(&d.Status, statusPath)...)
	return append(allErrs, validateCollisionCountUpdate(d.Status.CollisionCount, old.Status.CollisionCount)...)
}
