package core

import (
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	metavalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/registry/internaljson"
)

// Validation of core/v1 persistent volume claims, as upstream's
// ValidatePersistentVolumeClaim, ValidatePersistentVolumeClaimUpdate and
// ValidatePersistentVolumeClaimStatusUpdate (kubernetes
// pkg/apis/core/validation, v1.37), and their warnings (pkg/api/
// persistentvolumeclaim GetWarningsForPersistentVolumeClaim).

// claimOptions are upstream's PersistentVolumeClaimSpecValidationOptions
// at v1.37's defaults (RecoverVolumeExpansionFailure and
// VolumeAttributesClass are GA); the tolerances are set when the stored
// claim already has what they tolerate.
type claimOptions struct {
	allowInvalidLabelValueInSelector      bool
	allowInvalidAPIGroupInDataSourceOrRef bool
}

func optionsForClaim(old *corev1.PersistentVolumeClaim) claimOptions {
	var opts claimOptions
	if old == nil {
		return opts
	}
	ds, ref := old.Spec.DataSource, old.Spec.DataSourceRef
	opts.allowInvalidAPIGroupInDataSourceOrRef = ds != nil && ds.APIGroup != nil || ref != nil && ref.APIGroup != nil
	if len(metav1validation.ValidateLabelSelector(old.Spec.Selector, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0 {
		opts.allowInvalidLabelValueInSelector = true
	}
	return opts
}

// ValidatePersistentVolumeClaim checks a new claim: metadata and
// [ValidatePersistentVolumeClaimFields].
func ValidatePersistentVolumeClaim(pvc *corev1.PersistentVolumeClaim) field.ErrorList {
	allErrs := metavalidation.ValidateObjectMeta(&pvc.ObjectMeta, true, ValidatePersistentVolumeName, field.NewPath("metadata"))
	return append(allErrs, ValidatePersistentVolumeClaimSpec(&pvc.Spec, field.NewPath("spec"), optionsForClaim(nil))...)
}

// ValidatePersistentVolumeClaimFields checks a claim but for the generic
// metadata rules (see [ValidatePersistentVolumeClaimSpec]); old is the
// stored claim on updates.
func ValidatePersistentVolumeClaimFields(pvc, old *corev1.PersistentVolumeClaim) field.ErrorList {
	allErrs := metavalidation.ValidateKubeFinalizerNames(pvc.Finalizers, field.NewPath("metadata", "finalizers"))
	return append(allErrs, ValidatePersistentVolumeClaimSpec(&pvc.Spec, field.NewPath("spec"), optionsForClaim(old))...)
}

// ValidatePersistentVolumeClaimTemplateSpec checks the spec of a claim a
// workload will create (a StatefulSet's volumeClaimTemplates) with the
// options of a new claim, as upstream's validateVolumeClaimTemplates.
func ValidatePersistentVolumeClaimTemplateSpec(spec *corev1.PersistentVolumeClaimSpec, fldPath *field.Path) field.ErrorList {
	return ValidatePersistentVolumeClaimSpec(spec, fldPath, optionsForClaim(nil))
}

// ValidatePersistentVolumeClaimSpec checks a claim's spec (also a claim
// template's): at least one access mode, known ones, ReadWriteOncePod
// alone; a valid label selector; a positive resources.requests.storage;
// class names; a known volume mode; data sources naming a kind and a
// name (a PersistentVolumeClaim in the core group) and agreeing with
// each other.
func ValidatePersistentVolumeClaimSpec(spec *corev1.PersistentVolumeClaimSpec, fldPath *field.Path, opts claimOptions) field.ErrorList {
	allErrs := accessModesErrors(spec.AccessModes, fldPath.Child("accessModes"), "at least 1 access mode is required")
	if spec.Selector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(spec.Selector,
			metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.allowInvalidLabelValueInSelector},
			fldPath.Child("selector"))...)
	}
	storagePath := fldPath.Child("resources").Key(string(corev1.ResourceStorage))
	if q, ok := spec.Resources.Requests[corev1.ResourceStorage]; !ok {
		allErrs = append(allErrs, field.Required(storagePath, ""))
	} else if errs := ValidatePositiveQuantityValue(q, storagePath); len(errs) > 0 {
		allErrs = append(allErrs, errs...)
	} else {
		allErrs = append(allErrs, ValidateResourceQuantityValue(corev1.ResourceStorage, q, storagePath)...)
	}
	if c := spec.StorageClassName; c != nil && *c != "" {
		allErrs = append(allErrs, classNameErrors(*c, fldPath.Child("storageClassName"))...)
	}
	if m := spec.VolumeMode; m != nil && !containsMode(*m) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("volumeMode"), *m, volumeModes))
	}
	if ds := spec.DataSource; ds != nil {
		allErrs = append(allErrs, dataSourceErrors(ds.APIGroup, ds.Kind, ds.Name, fldPath.Child("dataSource"), opts.allowInvalidAPIGroupInDataSourceOrRef)...)
	}
	if ref := spec.DataSourceRef; ref != nil {
		p := fldPath.Child("dataSourceRef")
		allErrs = append(allErrs, dataSourceErrors(ref.APIGroup, ref.Kind, ref.Name, p, opts.allowInvalidAPIGroupInDataSourceOrRef)...)
		if ns := ref.Namespace; ns != nil && *ns != "" {
			for _, msg := range apimachineryvalidation.ValidateNamespaceName(*ns, false) {
				allErrs = append(allErrs, field.Invalid(p.Child("namespace"), *ns, msg))
			}
		}
	}
	if ref := spec.DataSourceRef; ref != nil && ref.Namespace != nil && *ref.Namespace != "" {
		if spec.DataSource != nil {
			allErrs = append(allErrs, field.Invalid(fldPath, fldPath.Child("dataSource"), "may not be specified when dataSourceRef.namespace is specified"))
		}
	} else if ds := spec.DataSource; ds != nil && ref != nil {
		if !reflect.DeepEqual(ds.APIGroup, ref.APIGroup) || ds.Kind != ref.Kind || ds.Name != ref.Name {
			allErrs = append(allErrs, field.Invalid(fldPath, fldPath.Child("dataSource"), "must match dataSourceRef"))
		}
	}
	if vac := spec.VolumeAttributesClassName; vac != nil && *vac != "" {
		allErrs = append(allErrs, classNameErrors(*vac, fldPath.Child("volumeAttributesClassName"))...)
	}
	return allErrs
}

func containsMode(m corev1.PersistentVolumeMode) bool {
	for _, v := range volumeModes {
		if v == m {
			return true
		}
	}
	return false
}

// dataSourceErrors checks a data source or data source reference: a
// name, a kind, PersistentVolumeClaim when it names no group, a DNS
// subdomain as group.
func dataSourceErrors(group *string, kind, name string, fldPath *field.Path, allowInvalidGroup bool) field.ErrorList {
	var allErrs field.ErrorList
	if name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	}
	if kind == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("kind"), ""))
	}
	g := ""
	if group != nil {
		g = *group
	}
	if g == "" && kind != "PersistentVolumeClaim" {
		allErrs = append(allErrs, field.Invalid(fldPath, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"))
	}
	if g != "" && !allowInvalidGroup {
		for _, msg := range validation.IsDNS1123Subdomain(g) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("apiGroup"), g, msg))
		}
	}
	return allErrs
}

// ValidatePersistentVolumeClaimUpdateFields checks an update of a claim
// but for the generic metadata rules: the new claim as
// [ValidatePersistentVolumeClaimFields]; a spec that does not change but
// for volumeName (set once), a storage class set from the beta
// annotation or from nothing, and, for bound claims, the storage request
// (which may grow, or shrink down to above status.capacity) and the
// volume attributes class; an unchanged storage class annotation and
// volume mode; a volume attributes class that is not removed.
func ValidatePersistentVolumeClaimUpdateFields(pvc, old *corev1.PersistentVolumeClaim) field.ErrorList {
	allErrs := ValidatePersistentVolumeClaimFields(pvc, old)
	newSpec, oldSpec := pvc.Spec.DeepCopy(), old.Spec.DeepCopy()
	if old.Spec.VolumeName == "" {
		oldSpec.VolumeName = newSpec.VolumeName
	}
	if storageClassFromAnnotation(old.Annotations, pvc.Annotations, old.Spec.StorageClassName, pvc.Spec.StorageClassName) {
		newSpec.StorageClassName = nil
	} else {
		newAnn, oldAnn := pvc.Annotations[corev1.BetaStorageClassAnnotation], old.Annotations[corev1.BetaStorageClassAnnotation]
		if newAnn != oldAnn {
			allErrs = append(allErrs, field.Invalid(field.NewPath("metadata").Child("annotations", corev1.BetaStorageClassAnnotation), newAnn,
				apimachineryvalidation.FieldImmutableErrorMsg))
		}
		if storageClassFromNil(old.Annotations, old.Spec.StorageClassName, pvc.Spec.StorageClassName) {
			newSpec.StorageClassName = oldSpec.StorageClassName
		}
	}
	bound := pvc.Status.Phase == corev1.ClaimBound
	if bound && newSpec.Resources.Requests != nil {
		newSpec.Resources.Requests[corev1.ResourceStorage] = old.Spec.Resources.Requests[corev1.ResourceStorage]
	}
	if bound && newSpec.VolumeAttributesClassName != nil {
		newSpec.VolumeAttributesClassName = oldSpec.VolumeAttributesClassName
	}
	if !equality.Semantic.DeepEqual(*newSpec, *oldSpec) {
		diff := internaljson.Diff(*oldSpec, *newSpec)
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec"),
			fmt.Sprintf("spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n%v", diff)))
	}
	oldSize, newSize := old.Spec.Resources.Requests[corev1.ResourceStorage], pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if newSize.Cmp(oldSize) < 0 {
		// RecoverVolumeExpansionFailure (GA): a request may shrink, but
		// not to the capacity already reached.
		statusSize := old.Status.Capacity[corev1.ResourceStorage]
		if newSize.Cmp(statusSize) <= 0 {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "resources", "requests", "storage"), "field can not be less than status.capacity"))
		}
	}
	// Upstream's path, sic.
	allErrs = append(allErrs, metavalidation.ValidateImmutableField(pvc.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	if old.Spec.VolumeAttributesClassName != nil && !equality.Semantic.DeepEqual(old.Spec.VolumeAttributesClassName, pvc.Spec.VolumeAttributesClassName) {
		vacPath := field.NewPath("spec", "volumeAttributesClassName")
		if pvc.Spec.VolumeAttributesClassName == nil {
			allErrs = append(allErrs, field.Forbidden(vacPath, "update from non-nil value to nil is forbidden"))
		} else if *pvc.Spec.VolumeAttributesClassName == "" {
			allErrs = append(allErrs, field.Forbidden(vacPath, "update from non-nil value to an empty string is forbidden"))
		}
	}
	return allErrs
}

// storageClassFromAnnotation reports whether an update moves the storage
// class from the beta annotation to spec.storageClassName (upstream's
// validateStorageClassUpgradeFromAnnotation).
func storageClassFromAnnotation(oldAnnotations, newAnnotations map[string]string, oldName, newName *string) bool {
	oldClass, oldSet := oldAnnotations[corev1.BetaStorageClassAnnotation]
	newClass, newSet := newAnnotations[corev1.BetaStorageClassAnnotation]
	return oldSet && oldName == nil && newName != nil && *newName == oldClass && (!newSet || newClass == oldClass)
}

// storageClassFromNil reports whether an update sets a storage class on a
// claim that had none (nor a different annotation).
func storageClassFromNil(oldAnnotations map[string]string, oldName, newName *string) bool {
	oldClass, oldSet := oldAnnotations[corev1.BetaStorageClassAnnotation]
	return newName != nil && oldName == nil && (!oldSet || *newName == oldClass)
}

// resizeStatuses are the values of status.allocatedResourceStatuses.
var resizeStatuses = []corev1.ClaimResourceStatus{
	corev1.PersistentVolumeClaimControllerResizeInProgress,
	corev1.PersistentVolumeClaimControllerResizeInfeasible,
	corev1.PersistentVolumeClaimNodeResizeInProgress,
	corev1.PersistentVolumeClaimNodeResizeInfeasible,
	corev1.PersistentVolumeClaimNodeResizePending,
}

// ValidatePersistentVolumeClaimStatusUpdateFields checks a status update
// of a claim but for the generic metadata rules: a resourceVersion, access
// modes in the spec, valid capacity quantities, and allocated resources
// and their statuses keyed by storage (or qualified names).
func ValidatePersistentVolumeClaimStatusUpdateFields(pvc, _ *corev1.PersistentVolumeClaim) field.ErrorList {
	allErrs := metavalidation.ValidateKubeFinalizerNames(pvc.Finalizers, field.NewPath("metadata", "finalizers"))
	if pvc.ResourceVersion == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("resourceVersion"), ""))
	}
	if len(pvc.Spec.AccessModes) == 0 {
		// Upstream's path, sic.
		allErrs = append(allErrs, field.Required(field.NewPath("Spec", "accessModes"), ""))
	}
	capPath := field.NewPath("status", "capacity")
	for _, r := range sortedNames(pvc.Status.Capacity) {
		allErrs = append(allErrs, basicResourceErrors(pvc.Status.Capacity[r], capPath.Key(string(r)))...)
	}
	statusPath := field.NewPath("status", "allocatedResourceStatus")
	for _, k := range sortedNames(toResourceList(pvc.Status.AllocatedResourceStatuses)) {
		if errs := claimResourceKeyErrors(string(k), statusPath); len(errs) > 0 {
			allErrs = append(allErrs, errs...)
		}
		if v := pvc.Status.AllocatedResourceStatuses[k]; !containsResizeStatus(v) {
			allErrs = append(allErrs, field.NotSupported(statusPath, k, resizeStatuses))
		}
	}
	allocPath := field.NewPath("status", "allocatedResources")
	for _, r := range sortedNames(pvc.Status.AllocatedResources) {
		if errs := claimResourceKeyErrors(string(r), allocPath); len(errs) > 0 {
			allErrs = append(allErrs, errs...)
			continue
		}
		q := pvc.Status.AllocatedResources[r]
		if errs := basicResourceErrors(q, allocPath.Key(string(r))); len(errs) > 0 {
			allErrs = append(allErrs, errs...)
		} else {
			allErrs = append(allErrs, ValidateResourceQuantityValue(corev1.ResourceStorage, q, allocPath.Key(string(r)))...)
		}
	}
	return allErrs
}

func containsResizeStatus(s corev1.ClaimResourceStatus) bool {
	for _, v := range resizeStatuses {
		if v == s {
			return true
		}
	}
	return false
}

func toResourceList(m map[corev1.ResourceName]corev1.ClaimResourceStatus) corev1.ResourceList {
	out := make(corev1.ResourceList, len(m))
	for k := range m {
		out[k] = resource.Quantity{}
	}
	return out
}

// claimResourceKeyErrors: a qualified name, and storage when it is a
// native resource.
func claimResourceKeyErrors(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsQualifiedName(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	if len(allErrs) != 0 {
		return allErrs
	}
	if isNativeResource(corev1.ResourceName(value)) && corev1.ResourceName(value) != corev1.ResourceStorage {
		return field.ErrorList{field.NotSupported(fldPath, value, []corev1.ResourceName{corev1.ResourceStorage})}
	}
	return nil
}

// PersistentVolumeClaimWarnings are upstream's warnings for a claim: the
// deprecated storage class annotation, and storage requests or limits in
// fractions of a byte.
func PersistentVolumeClaimWarnings(pvc *corev1.PersistentVolumeClaim) []string {
	var out []string
	if _, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		out = append(out, fmt.Sprintf("%s: %s", field.NewPath("metadata", "annotations").Key(corev1.BetaStorageClassAnnotation), deprecatedStorageClassAnnotationMsg))
	}
	return append(out, ClaimSpecWarnings(field.NewPath("spec"), &pvc.Spec)...)
}

// ClaimSpecWarnings warns about storage requests and limits in fractions
// of a byte (upstream's GetWarningsForPersistentVolumeClaimSpec).
func ClaimSpecWarnings(fldPath *field.Path, spec *corev1.PersistentVolumeClaimSpec) []string {
	var out []string
	for _, l := range []struct {
		name string
		list corev1.ResourceList
	}{{"requests", spec.Resources.Requests}, {"limits", spec.Resources.Limits}} {
		q := l.list[corev1.ResourceStorage]
		if q.MilliValue()%1000 != 0 {
			out = append(out, fmt.Sprintf("%s: fractional byte value %q is invalid, must be an integer",
				fldPath.Child("resources").Child(l.name).Key(string(corev1.ResourceStorage)), q.String()))
		}
	}
	return out
}
