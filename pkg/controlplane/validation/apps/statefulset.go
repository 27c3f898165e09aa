package apps

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/core"
)

// ValidateStatefulSetName is the rule for statefulset names: DNS labels
// (they become pod hostnames).
var ValidateStatefulSetName = apimachineryvalidation.NameIsDNSLabel

// ValidatePodTemplateSpecForStatefulSet is v1.37's template check of
// statefulsets: the selector matches the template's labels; the template
// is a valid pod template (unless skipPodTemplate: on an update of a
// statefulset whose stored spec is already invalid); its labels and
// annotations are checked again at <template>.labels and
// <template>.annotations.
func ValidatePodTemplateSpecForStatefulSet(template *corev1.PodTemplateSpec, selector labels.Selector, fldPath *field.Path, opts PodValidationOptions, skipPodTemplate bool) field.ErrorList {
	allErrs := templateLabelsMismatch(selector, template, fldPath)
	if !skipPodTemplate {
		allErrs = append(allErrs, validatePodTemplate(template, fldPath, opts)...)
	}
	// Labels and annotations are checked again, as upstream does; the
	// store reports each repeated error once, as upstream's (see
	// pkg/registry/generic's orderDeclarative).
	return append(allErrs, validatePodTemplateMeta(template, fldPath, opts)...)
}

// statefulSetOptions are upstream's StatefulSetValidationOptions that
// differ between create and update.
type statefulSetOptions struct {
	// allowInvalidServiceName: serviceName is immutable, an update keeps
	// whatever was stored.
	allowInvalidServiceName bool
	// skipPodTemplate: the stored spec is invalid already (an update).
	skipPodTemplate bool
	// skipVolumeClaimTemplates: they are immutable (an update).
	skipVolumeClaimTemplates bool
}

// templateForValidation is the template upstream validates: hostname and
// subdomain blanked (the controller sets them), and a volume for each
// claim template (named after it; mounts may refer to it) ahead of the
// template's other volumes.
func templateForValidation(spec *appsv1.StatefulSetSpec) *corev1.PodTemplateSpec {
	t := &spec.Template
	if t.Spec.Subdomain == "" && t.Spec.Hostname == "" && len(spec.VolumeClaimTemplates) == 0 {
		return t
	}
	t = t.DeepCopy()
	t.Spec.Subdomain, t.Spec.Hostname = "", ""
	if len(spec.VolumeClaimTemplates) > 0 {
		claims := make(map[string]bool, len(spec.VolumeClaimTemplates))
		var volumes []corev1.Volume
		for _, c := range spec.VolumeClaimTemplates {
			if claims[c.Name] {
				continue
			}
			claims[c.Name] = true
			volumes = append(volumes, corev1.Volume{Name: c.Name, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c.Name},
			}})
		}
		for _, v := range t.Spec.Volumes {
			if !claims[v.Name] {
				volumes = append(volumes, v)
			}
		}
		t.Spec.Volumes = volumes
	}
	return t
}

// validateRetentionPolicyType checks one persistentVolumeClaimRetentionPolicy value.
func validateRetentionPolicyType(p appsv1.PersistentVolumeClaimRetentionPolicyType, fldPath *field.Path) field.ErrorList {
	switch p {
	case appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType:
		return nil
	}
	return field.ErrorList{field.NotSupported(fldPath, p, []string{
		string(appsv1.RetainPersistentVolumeClaimRetentionPolicyType), string(appsv1.DeletePersistentVolumeClaimRetentionPolicyType)})}
}

// validateRollingUpdateStatefulSet checks partition (not negative) and
// maxUnavailable (a positive integer or percentage, at most 100%).
func validateRollingUpdateStatefulSet(ru *appsv1.RollingUpdateStatefulSetStrategy, fldPath *field.Path) field.ErrorList {
	allErrs := nonNegative(int64(deref(ru.Partition)), fldPath.Child("partition"))
	if ru.MaxUnavailable != nil {
		p := fldPath.Child("maxUnavailable")
		allErrs = append(allErrs, ValidatePositiveIntOrPercent(*ru.MaxUnavailable, p)...)
		if intOrPercentValue(*ru.MaxUnavailable) == 0 {
			allErrs = append(allErrs, field.Invalid(p, *ru.MaxUnavailable, "cannot be 0"))
		}
		allErrs = append(allErrs, IsNotMoreThan100Percent(*ru.MaxUnavailable, p)...)
	}
	return allErrs
}

// ValidateStatefulSetSpec checks a statefulset's spec, as v1.37's
// ValidateStatefulSetSpec (pkg/apis/apps/validation). The Recreate update
// strategy is alpha in v1.37 behind a gate that is off by default: it is
// rejected, as kube-apiserver with default gates does.
func ValidateStatefulSetSpec(spec *appsv1.StatefulSetSpec, fldPath *field.Path, opts PodValidationOptions, setOpts statefulSetOptions) field.ErrorList {
	var allErrs field.ErrorList
	switch spec.PodManagementPolicy {
	case "":
		allErrs = append(allErrs, field.Required(fldPath.Child("podManagementPolicy"), ""))
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		allErrs = append(allErrs, field.Invalid(fldPath.Child("podManagementPolicy"), spec.PodManagementPolicy,
			fmt.Sprintf("must be '%s' or '%s'", appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement)))
	}

	us := spec.UpdateStrategy
	switch us.Type {
	case "":
		allErrs = append(allErrs, field.Required(fldPath.Child("updateStrategy"), ""))
	case appsv1.OnDeleteStatefulSetStrategyType:
		if us.RollingUpdate != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("updateStrategy", "rollingUpdate"), us.RollingUpdate,
				fmt.Sprintf("only allowed for updateStrategy '%s'", appsv1.RollingUpdateStatefulSetStrategyType)))
		}
	case appsv1.RollingUpdateStatefulSetStrategyType:
		if us.RollingUpdate != nil {
			allErrs = append(allErrs, validateRollingUpdateStatefulSet(us.RollingUpdate, fldPath.Child("updateStrategy", "rollingUpdate"))...)
		}
	default:
		allErrs = append(allErrs, field.Invalid(fldPath.Child("updateStrategy"), us,
			fmt.Sprintf("must be '%s' or '%s'", appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType)))
	}

	if p := spec.PersistentVolumeClaimRetentionPolicy; p != nil {
		rp := fldPath.Child("persistentVolumeClaimRetentionPolicy")
		allErrs = append(allErrs, validateRetentionPolicyType(p.WhenDeleted, rp.Child("whenDeleted"))...)
		allErrs = append(allErrs, validateRetentionPolicyType(p.WhenScaled, rp.Child("whenScaled"))...)
	}
	if !setOpts.skipVolumeClaimTemplates {
		for i := range spec.VolumeClaimTemplates {
			allErrs = append(allErrs, core.ValidatePersistentVolumeClaimTemplateSpec(&spec.VolumeClaimTemplates[i].Spec, fldPath.Child("volumeClaimTemplates").Index(i).Child("spec"))...)
		}
	}

	allErrs = append(allErrs, nonNegative(int64(deref(spec.Replicas)), fldPath.Child("replicas"))...)
	allErrs = append(allErrs, nonNegative(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))...)
	if spec.Ordinals != nil {
		// upstream's path: one child named "ordinals.start"
		allErrs = append(allErrs, nonNegative(int64(spec.Ordinals.Start), fldPath.Child("ordinals.start"))...)
	}

	if !setOpts.allowInvalidServiceName && spec.ServiceName != "" {
		allErrs = append(allErrs, core.ValidateDNS1123Label(spec.ServiceName, fldPath.Child("serviceName"))...)
	}

	allErrs = append(allErrs, validateRequiredSelector(spec.Selector, "statefulset", fldPath.Child("selector"))...)
	if selector, err := metav1.LabelSelectorAsSelector(spec.Selector); err != nil {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("selector"), spec.Selector, ""))
	} else {
		allErrs = append(allErrs, ValidatePodTemplateSpecForStatefulSet(templateForValidation(spec), selector, fldPath.Child("template"), opts, setOpts.skipPodTemplate)...)
	}
	allErrs = append(allErrs, validateAlwaysRestart(&spec.Template.Spec, fldPath.Child("template", "spec"), "StatefulSet")...)
	return allErrs
}

// ValidateStatefulSetFields checks a new statefulset but for the generic
// metadata rules.
func ValidateStatefulSetFields(ss *appsv1.StatefulSet, opts PodValidationOptions) field.ErrorList {
	allErrs := metaFields(&ss.ObjectMeta)
	return append(allErrs, ValidateStatefulSetSpec(&ss.Spec, specPath, opts, statefulSetOptions{})...)
}

// ValidateStatefulSet checks a new statefulset.
func ValidateStatefulSet(ss *appsv1.StatefulSet, opts PodValidationOptions) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&ss.ObjectMeta, true, ValidateStatefulSetName, metadataPath)
	return append(allErrs, ValidateStatefulSetFields(ss, opts)...)
}

// ValidateStatefulSetUpdateFields checks an update of a statefulset but for
// the generic metadata rules, as v1.37's ValidateStatefulSetUpdate: the new
// spec is valid (its serviceName and claim templates as stored, and its
// pod template only when the stored spec was valid), and selector,
// volumeClaimTemplates, serviceName and podManagementPolicy are
// immutable. The name is not checked again (upstream accepts existing
// names that were valid DNS subdomains).
func ValidateStatefulSetUpdateFields(ss, old *appsv1.StatefulSet, opts PodValidationOptions) field.ErrorList {
	allErrs := metaFields(&ss.ObjectMeta)
	setOpts := statefulSetOptions{allowInvalidServiceName: true, skipVolumeClaimTemplates: true}
	if len(ValidateStatefulSetSpec(&old.Spec, nil, opts, setOpts)) > 0 {
		setOpts.skipPodTemplate = true
	}
	allErrs = append(allErrs, ValidateStatefulSetSpec(&ss.Spec, specPath, opts, setOpts)...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(ss.Spec.Selector, old.Spec.Selector, specPath.Child("selector"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(internalClaimTemplates(ss.Spec.VolumeClaimTemplates), internalClaimTemplates(old.Spec.VolumeClaimTemplates), specPath.Child("volumeClaimTemplates"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(ss.Spec.ServiceName, old.Spec.ServiceName, specPath.Child("serviceName"))...)
	return append(allErrs, apimachineryvalidation.ValidateImmutableField(ss.Spec.PodManagementPolicy, old.Spec.PodManagementPolicy, specPath.Child("podManagementPolicy"))...)
}

// ValidateStatefulSetUpdate checks an update of a statefulset.
func ValidateStatefulSetUpdate(ss, old *appsv1.StatefulSet, opts PodValidationOptions) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&ss.ObjectMeta, &old.ObjectMeta, metadataPath)
	return append(allErrs, ValidateStatefulSetUpdateFields(ss, old, opts)...)
}

// ValidateStatefulSetStatus checks a statefulset's status.
func ValidateStatefulSetStatus(s *appsv1.StatefulSetStatus, fldPath *field.Path) field.ErrorList {
	allErrs := nonNegative(int64(s.Replicas), fldPath.Child("replicas"))
	allErrs = append(allErrs, nonNegative(int64(s.ReadyReplicas), fldPath.Child("readyReplicas"))...)
	allErrs = append(allErrs, nonNegative(int64(s.CurrentReplicas), fldPath.Child("currentReplicas"))...)
	allErrs = append(allErrs, nonNegative(int64(s.UpdatedReplicas), fldPath.Child("updatedReplicas"))...)
	allErrs = append(allErrs, nonNegative(int64(s.AvailableReplicas), fldPath.Child("availableReplicas"))...)
	allErrs = append(allErrs, nonNegative(s.ObservedGeneration, fldPath.Child("observedGeneration"))...)
	if s.CollisionCount != nil {
		allErrs = append(allErrs, nonNegative(int64(*s.CollisionCount), fldPath.Child("collisionCount"))...)
	}
	if s.ReadyReplicas > s.Replicas {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("readyReplicas"), s.ReadyReplicas, greaterThanReplicasMsg))
	}
	if s.CurrentReplicas > s.Replicas {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("currentReplicas"), s.CurrentReplicas, greaterThanReplicasMsg))
	}
	if s.UpdatedReplicas > s.Replicas {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("updatedReplicas"), s.UpdatedReplicas, greaterThanReplicasMsg))
	}
	if s.AvailableReplicas > s.Replicas {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("availableReplicas"), s.AvailableReplicas, greaterThanReplicasMsg))
	}
	if s.AvailableReplicas > s.ReadyReplicas {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("availableReplicas"), s.AvailableReplicas, "cannot be greater than status.readyReplicas"))
	}
	return allErrs
}

// ValidateStatefulSetStatusUpdateFields checks a /status update but for the
// generic metadata rules.
func ValidateStatefulSetStatusUpdateFields(ss, old *appsv1.StatefulSet) field.ErrorList {
	allErrs := metaFields(&ss.ObjectMeta)
	allErrs = append(allErrs, ValidateStatefulSetStatus(&ss.Status, statusPath)...)
	return append(allErrs, validateCollisionCountUpdate(ss.Status.CollisionCount, old.Status.CollisionCount)...)
}

// internalClaimTemplates are the claim templates as upstream validates
// them: v1.37's conversion to the internal StatefulSetSpec clears their
// apiVersion and kind (Convert_v1_StatefulSetSpec_To_apps_StatefulSetSpec),
// so an immutable error's value shows neither.
func internalClaimTemplates(ts []corev1.PersistentVolumeClaim) []corev1.PersistentVolumeClaim {
	if ts == nil {
		return nil
	}
	out := make([]corev1.PersistentVolumeClaim, len(ts))
	for i := range ts {
		out[i] = ts[i]
		out[i].TypeMeta = metav1.TypeMeta{}
	}
	return out
}
