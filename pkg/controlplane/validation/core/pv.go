package core

import (
	"fmt"
	"path"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	metavalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/registry/internaljson"
)

// Validation of core/v1 persistent volumes, as upstream's
// ValidatePersistentVolume, ValidatePersistentVolumeUpdate and
// ValidatePersistentVolumeStatusUpdate (kubernetes
// pkg/apis/core/validation, v1.37), and their warnings (pkg/api/
// persistentvolume GetWarningsForPersistentVolume).

// ValidatePersistentVolumeName checks a volume's (or claim's) name: a DNS
// subdomain.
var ValidatePersistentVolumeName = apimachineryvalidation.NameIsDNSSubdomain

// accessModes are the access modes volumes and claims may have.
var accessModes = []corev1.PersistentVolumeAccessMode{
	corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOnce, corev1.ReadWriteOncePod,
}

var reclaimPolicies = []corev1.PersistentVolumeReclaimPolicy{
	corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRecycle, corev1.PersistentVolumeReclaimRetain,
}

var volumeModes = []corev1.PersistentVolumeMode{corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem}

// persistentVolumeOptions are upstream's PersistentVolumeSpecValidationOptions
// at v1.37's defaults: volumeAttributesClassName is validated
// (VolumeAttributesClass is GA), and invalid label values in a required
// node affinity are tolerated only when the stored volume has some.
type persistentVolumeOptions struct {
	allowInvalidLabelValueInRequiredNodeAffinity bool
}

func optionsForPersistentVolume(old *corev1.PersistentVolume) persistentVolumeOptions {
	var opts persistentVolumeOptions
	if old != nil && old.Spec.NodeAffinity != nil && old.Spec.NodeAffinity.Required != nil {
		opts.allowInvalidLabelValueInRequiredNodeAffinity = hasInvalidLabelValue(old.Spec.NodeAffinity.Required.NodeSelectorTerms)
	}
	return opts
}

func hasInvalidLabelValue(terms []corev1.NodeSelectorTerm) bool {
	for _, t := range terms {
		for _, e := range t.MatchExpressions {
			for _, v := range e.Values {
				if len(validation.IsValidLabelValue(v)) > 0 {
					return true
				}
			}
		}
	}
	return false
}

// ValidatePersistentVolume checks a new volume: metadata and
// [ValidatePersistentVolumeFields].
func ValidatePersistentVolume(pv *corev1.PersistentVolume) field.ErrorList {
	allErrs := metavalidation.ValidateObjectMeta(&pv.ObjectMeta, false, ValidatePersistentVolumeName, field.NewPath("metadata"))
	return append(allErrs, validatePersistentVolumeSpec(&pv.Spec, pv.Name, field.NewPath("spec"), optionsForPersistentVolume(nil))...)
}

// ValidatePersistentVolumeFields checks a volume but for the generic
// metadata rules: access modes (at least one, known, ReadWriteOncePod
// alone), a positive storage capacity and nothing else, a known reclaim
// policy and volume mode, a required node affinity, exactly one valid
// volume source (local volumes need a node affinity), the storage and
// volume attributes class names. old is the stored volume on updates.
func ValidatePersistentVolumeFields(pv, old *corev1.PersistentVolume) field.ErrorList {
	allErrs := metavalidation.ValidateKubeFinalizerNames(pv.Finalizers, field.NewPath("metadata", "finalizers"))
	return append(allErrs, validatePersistentVolumeSpec(&pv.Spec, pv.Name, field.NewPath("spec"), optionsForPersistentVolume(old))...)
}

// ValidatePersistentVolumeUpdateFields checks an update of a volume but
// for the generic metadata rules: the new volume as
// [ValidatePersistentVolumeFields], an unchanged source (a CSI volume may
// gain a controllerExpandSecretRef), volume mode and node affinity, and a
// volumeAttributesClassName that is not removed.
func ValidatePersistentVolumeUpdateFields(pv, old *corev1.PersistentVolume) field.ErrorList {
	allErrs := ValidatePersistentVolumeFields(pv, old)
	newSource := &pv.Spec.PersistentVolumeSource
	if old.Spec.CSI != nil && old.Spec.CSI.ControllerExpandSecretRef == nil && pv.Spec.CSI != nil && pv.Spec.CSI.ControllerExpandSecretRef != nil {
		newSource = newSource.DeepCopy()
		newSource.CSI.ControllerExpandSecretRef = nil
	}
	if !equality.Semantic.DeepEqual(*newSource, old.Spec.PersistentVolumeSource) {
		diff := internaljson.Diff(old.Spec.PersistentVolumeSource, *newSource)
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "persistentvolumesource"),
			fmt.Sprintf("spec.persistentvolumesource is immutable after creation\n%v", diff)))
	}
	// Upstream's paths, sic.
	allErrs = append(allErrs, metavalidation.ValidateImmutableField(pv.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	if old.Spec.NodeAffinity != nil && !equality.Semantic.DeepEqual(pv.Spec.NodeAffinity, betaToGAKeys(pv.Spec.NodeAffinity, old.Spec.NodeAffinity)) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("nodeAffinity"), pv.Spec.NodeAffinity, "field is immutable, except for updating from beta label to GA"))
	}
	if old.Spec.VolumeAttributesClassName != nil && pv.Spec.VolumeAttributesClassName == nil {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "volumeAttributesClassName"), "update from non-nil value to nil is forbidden"))
	}
	return allErrs
}

// ValidatePersistentVolumeStatusUpdateFields checks a status update of a
// volume but for the generic metadata rules: a resourceVersion is
// required.
func ValidatePersistentVolumeStatusUpdateFields(pv, _ *corev1.PersistentVolume) field.ErrorList {
	allErrs := metavalidation.ValidateKubeFinalizerNames(pv.Finalizers, field.NewPath("metadata", "finalizers"))
	if pv.ResourceVersion == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("resourceVersion"), ""))
	}
	return allErrs
}

func validatePersistentVolumeSpec(spec *corev1.PersistentVolumeSpec, name string, fldPath *field.Path, opts persistentVolumeOptions) field.ErrorList {
	allErrs := accessModesErrors(spec.AccessModes, fldPath.Child("accessModes"), "")
	capPath := fldPath.Child("capacity")
	if len(spec.Capacity) == 0 {
		allErrs = append(allErrs, field.Required(capPath, ""))
	}
	if _, ok := spec.Capacity[corev1.ResourceStorage]; !ok || len(spec.Capacity) > 1 {
		allErrs = append(allErrs, field.NotSupported(capPath, spec.Capacity, []corev1.ResourceName{corev1.ResourceStorage}))
	}
	for _, r := range sortedNames(spec.Capacity) {
		q := spec.Capacity[r]
		allErrs = append(allErrs, basicResourceErrors(q, capPath.Key(string(r)))...)
		allErrs = append(allErrs, ValidatePositiveQuantityValue(q, capPath.Key(string(r)))...)
	}
	if p := spec.PersistentVolumeReclaimPolicy; p != "" && !slices.Contains(reclaimPolicies, p) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("persistentVolumeReclaimPolicy"), p, reclaimPolicies))
	}
	nodeAffinitySet := false
	if na := spec.NodeAffinity; na != nil {
		nodeAffinitySet = true
		if na.Required == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("nodeAffinity", "required"), "must specify required node constraints"))
		} else {
			allErrs = append(allErrs, ValidateNodeSelector(na.Required, opts.allowInvalidLabelValueInRequiredNodeAffinity, fldPath.Child("nodeAffinity", "required"))...)
		}
	}
	allErrs = append(allErrs, validatePersistentVolumeSource(&spec.PersistentVolumeSource, name, nodeAffinitySet, fldPath)...)
	if spec.HostPath != nil && path.Clean(spec.HostPath.Path) == "/" && spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRecycle {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("persistentVolumeReclaimPolicy"), "may not be 'recycle' for a hostPath mount of '/'"))
	}
	if spec.StorageClassName != "" {
		allErrs = append(allErrs, classNameErrors(spec.StorageClassName, fldPath.Child("storageClassName"))...)
	}
	if m := spec.VolumeMode; m != nil && !slices.Contains(volumeModes, *m) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("volumeMode"), *m, volumeModes))
	}
	if vac := spec.VolumeAttributesClassName; vac != nil {
		if *vac == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("volumeAttributesClassName"), "an empty string is disallowed"))
		} else {
			allErrs = append(allErrs, classNameErrors(*vac, fldPath.Child("volumeAttributesClassName"))...)
		}
		if spec.CSI == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("csi"), "has to be specified when using volumeAttributesClassName"))
		}
	}
	return allErrs
}

// accessModesErrors: at least one, each supported, ReadWriteOncePod
// alone. requiredDetail is the Required error's detail.
func accessModesErrors(modes []corev1.PersistentVolumeAccessMode, fldPath *field.Path, requiredDetail string) field.ErrorList {
	var allErrs field.ErrorList
	if len(modes) == 0 {
		allErrs = append(allErrs, field.Required(fldPath, requiredDetail))
	}
	rwop, other := false, false
	for _, m := range modes {
		switch {
		case !slices.Contains(accessModes, m):
			allErrs = append(allErrs, field.NotSupported(fldPath, m, accessModes))
		case m == corev1.ReadWriteOncePod:
			rwop = true
		default:
			other = true
		}
	}
	if rwop && other {
		allErrs = append(allErrs, field.Forbidden(fldPath, "may not use ReadWriteOncePod with other access modes"))
	}
	return allErrs
}

// classNameErrors checks a storage or volume attributes class name: a DNS
// subdomain.
func classNameErrors(name string, fldPath *field.Path) field.ErrorList {
	return nameErrors(validateClassName, name, fldPath)
}

// deprecatedStorageClassAnnotationMsg is upstream's warning for the beta
// storage class annotation.
const deprecatedStorageClassAnnotationMsg = `deprecated since v1.8; use "storageClassName" attribute instead`

// PersistentVolumeWarnings are upstream's warnings for a volume: the
// deprecated storage class annotation, the Recycle reclaim policy,
// deprecated node labels in its node affinity, and volume plugins that no
// longer work.
func PersistentVolumeWarnings(pv *corev1.PersistentVolume) []string {
	var out []string
	if _, ok := pv.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		out = append(out, fmt.Sprintf("%s: %s", field.NewPath("metadata", "annotations").Key(corev1.BetaStorageClassAnnotation), deprecatedStorageClassAnnotationMsg))
	}
	spec := field.NewPath("spec")
	if pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRecycle {
		out = append(out, fmt.Sprintf("%s: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning.", spec.Child("persistentVolumeReclaimPolicy")))
	}
	if na := pv.Spec.NodeAffinity; na != nil && na.Required != nil {
		termsPath := spec.Child("nodeAffinity", "required", "nodeSelectorTerms")
		for i, term := range na.Required.NodeSelectorTerms {
			for j, e := range term.MatchExpressions {
				if msg, ok := deprecatedNodeLabels[e.Key]; ok {
					out = append(out, fmt.Sprintf("%s: %s is %s", termsPath.Index(i).Child("matchExpressions").Index(j).Child("key"), e.Key, msg))
				}
			}
		}
	}
	s := &pv.Spec.PersistentVolumeSource
	for _, d := range []struct {
		set        bool
		name, when string
	}{
		{s.CephFS != nil, "cephfs", "deprecated in v1.28, non-functional in v1.31+"},
		{s.PhotonPersistentDisk != nil, "photonPersistentDisk", "deprecated in v1.11, non-functional in v1.16+"},
		{s.ScaleIO != nil, "scaleIO", "deprecated in v1.16, non-functional in v1.22+"},
		{s.StorageOS != nil, "storageOS", "deprecated in v1.22, non-functional in v1.25+"},
		{s.Glusterfs != nil, "glusterfs", "deprecated in v1.25, non-functional in v1.26+"},
		{s.RBD != nil, "rbd", "deprecated in v1.28, non-functional in v1.31+"},
	} {
		if d.set {
			out = append(out, fmt.Sprintf("%s: %s", spec.Child(d.name), d.when))
		}
	}
	return out
}

// betaToGALabel are the node labels whose GA name a PV's node affinity may
// take in place of the beta one (v1.37.2's betaToGALabel).
var betaToGALabel = map[string]string{
	corev1.LabelFailureDomainBetaZone:   corev1.LabelTopologyZone,
	corev1.LabelFailureDomainBetaRegion: corev1.LabelTopologyRegion,
	"beta.kubernetes.io/os":             corev1.LabelOSStable,
	"beta.kubernetes.io/arch":           corev1.LabelArchStable,
	corev1.LabelInstanceType:            corev1.LabelInstanceTypeStable,
}

// betaToGAKeys is old with each requirement key that new, at the same
// place, changes from a beta label to its GA one taken from new: upstream
// compares the affinities with an equality that allows that change.
func betaToGAKeys(new, old *corev1.VolumeNodeAffinity) *corev1.VolumeNodeAffinity {
	if new == nil || new.Required == nil || old.Required == nil || len(new.Required.NodeSelectorTerms) != len(old.Required.NodeSelectorTerms) {
		return old
	}
	out := old.DeepCopy()
	for i, t := range out.Required.NodeSelectorTerms {
		nt := new.Required.NodeSelectorTerms[i]
		for j := range t.MatchExpressions {
			if j < len(nt.MatchExpressions) && betaToGALabel[t.MatchExpressions[j].Key] == nt.MatchExpressions[j].Key {
				t.MatchExpressions[j].Key = nt.MatchExpressions[j].Key
			}
		}
		for j := range t.MatchFields {
			if j < len(nt.MatchFields) && betaToGALabel[t.MatchFields[j].Key] == nt.MatchFields[j].Key {
				t.MatchFields[j].Key = nt.MatchFields[j].Key
			}
		}
	}
	return out
}
