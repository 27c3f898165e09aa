package apps

import (
	appsv1 "k8s.io/api/apps/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
)

// ValidateReplicaSetName is the rule for replicaset names: DNS subdomains.
var ValidateReplicaSetName = apimachineryvalidation.NameIsDNSSubdomain

// ValidateReplicaSetSpec checks a replicaset's spec. As upstream, an empty
// selector is reported as "empty selector is invalid for deployment".
func ValidateReplicaSetSpec(spec *appsv1.ReplicaSetSpec, fldPath *field.Path, opts PodValidationOptions) field.ErrorList {
	allErrs := nonNegative(int64(deref(spec.Replicas)), fldPath.Child("replicas"))
	allErrs = append(allErrs, nonNegative(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))...)
	allErrs = append(allErrs, validateRequiredSelector(spec.Selector, "deployment", fldPath.Child("selector"))...)
	if selector, err := metav1.LabelSelectorAsSelector(spec.Selector); err != nil {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("selector"), spec.Selector, "invalid label selector"))
	} else {
		allErrs = append(allErrs, ValidatePodTemplateSpecForReplicaSet(&spec.Template, selector, fldPath.Child("template"), opts)...)
	}
	return allErrs
}

// ValidateReplicaSetFields checks a new replicaset but for the generic
// metadata rules.
func ValidateReplicaSetFields(rs *appsv1.ReplicaSet, opts PodValidationOptions) field.ErrorList {
	allErrs := metaFields(&rs.ObjectMeta)
	return append(allErrs, ValidateReplicaSetSpec(&rs.Spec, specPath, opts)...)
}

// ValidateReplicaSet checks a new replicaset.
func ValidateReplicaSet(rs *appsv1.ReplicaSet, opts PodValidationOptions) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&rs.ObjectMeta, true, ValidateReplicaSetName, metadataPath)
	return append(allErrs, ValidateReplicaSetFields(rs, opts)...)
}

// ValidateReplicaSetUpdateFields checks an update of a replicaset but for
// the generic metadata rules: the new spec is valid and the selector did
// not change.
func ValidateReplicaSetUpdateFields(rs, old *appsv1.ReplicaSet, opts PodValidationOptions) field.ErrorList {
	allErrs := ValidateReplicaSetFields(rs, opts)
	return append(allErrs, validation.ValidateImmutableField(rs.Spec.Selector, old.Spec.Selector, specPath.Child("selector"))...)
}

// ValidateReplicaSetUpdate checks an update of a replicaset.
func ValidateReplicaSetUpdate(rs, old *appsv1.ReplicaSet, opts PodValidationOptions) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&rs.ObjectMeta, &old.ObjectMeta, metadataPath)
	return append(allErrs, ValidateReplicaSetUpdateFields(rs, old, opts)...)
}

// ValidateReplicaSetStatus checks a replicaset's status.
func ValidateReplicaSetStatus(s *appsv1.ReplicaSetStatus, fldPath *field.Path) field.ErrorList {
	allErrs := nonNegative(int64(s.Replicas), fldPath.Child("replicas"))
	allErrs = append(allErrs, nonNegative(int64(s.FullyLabeledReplicas), fldPath.Child("fullyLabeledReplicas"))...)
	allErrs = append(allErrs, nonNegative(int64(s.ReadyReplicas), fldPath.Child("readyReplicas"))...)
	allErrs = append(allErrs, nonNegative(int64(s.AvailableReplicas), fldPath.Child("availableReplicas"))...)
	allErrs = append(allErrs, nonNegative(s.ObservedGeneration, fldPath.Child("observedGeneration"))...)
	if s.TerminatingReplicas != nil {
		allErrs = append(allErrs, nonNegative(int64(*s.TerminatingReplicas), fldPath.Child("terminatingReplicas"))...)
	}
	if s.FullyLabeledReplicas > s.Replicas {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("fullyLabeledReplicas"), s.FullyLabeledReplicas, greaterThanReplicasMsg))
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

// ValidateReplicaSetStatusUpdateFields checks a /status update but for the
// generic metadata rules.
func ValidateReplicaSetStatusUpdateFields(rs, _ *appsv1.ReplicaSet) field.ErrorList {
	allErrs := metaFields(&rs.ObjectMeta)
	return append(allErrs, ValidateReplicaSetStatus(&rs.Status, statusPath)...)
}
