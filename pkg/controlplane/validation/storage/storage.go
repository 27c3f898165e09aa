package storage

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kvalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation/core"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation/declarative"
)

const (
	maxProvisionerParameterSize   = 256 * (1 << 10)
	maxProvisionerParameterLen    = 512
	maxAttachedVolumeMetadataSize = 256 * (1 << 10)
	maxVolumeErrorMessageSize     = 1024
	csiNodeIDMaxLength            = 256 // AllowLongNodeID, always true for v1 objects
)

var (
	supportedReclaimPolicies = []string{string(corev1.PersistentVolumeReclaimDelete), string(corev1.PersistentVolumeReclaimRetain)}
	supportedBindingModes    = []string{string(storagev1.VolumeBindingImmediate), string(storagev1.VolumeBindingWaitForFirstConsumer)}
	supportedFSGroupPolicies = []string{string(storagev1.FileFSGroupPolicy), string(storagev1.NoneFSGroupPolicy), string(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy)}
	supportedLifecycleModes  = []string{string(storagev1.VolumeLifecyclePersistent), string(storagev1.VolumeLifecycleEphemeral)}
)

func meta(m *metav1.ObjectMeta, namespaced bool, name apimachineryvalidation.ValidateNameFunc) field.ErrorList {
	return kvalidation.ValidateObjectMeta(m, namespaced, name, field.NewPath("metadata"))
}

// ValidateStorageClass checks a class with its metadata.
func ValidateStorageClass(sc *storagev1.StorageClass) field.ErrorList {
	return append(meta(&sc.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain), ValidateStorageClassFields(sc)...)
}

// ValidateStorageClassFields: provisioner a qualified name, parameters
// within limits, reclaimPolicy Delete or Retain, volumeBindingMode set
// and supported, allowedTopologies valid and without duplicate terms.
func ValidateStorageClassFields(sc *storagev1.StorageClass) field.ErrorList {
	allErrs := validateProvisioner(sc.Provisioner, field.NewPath("provisioner"))
	if sc.Provisioner == "" {
		// Upstream's +k8s:required (beta) on StorageClass.provisioner.
		allErrs = declarative.Covered(allErrs)
	}
	allErrs = append(allErrs, validateParameters(sc.Parameters, true, field.NewPath("parameters"))...)
	if p := sc.ReclaimPolicy; p != nil && *p != "" && !slices.Contains(supportedReclaimPolicies, string(*p)) {
		allErrs = append(allErrs, field.NotSupported(field.NewPath("reclaimPolicy"), *p, supportedReclaimPolicies))
	}
	if m := sc.VolumeBindingMode; m == nil {
		allErrs = append(allErrs, field.Required(field.NewPath("volumeBindingMode"), ""))
	} else if !slices.Contains(supportedBindingModes, string(*m)) {
		allErrs = append(allErrs, field.NotSupported(field.NewPath("volumeBindingMode"), *m, supportedBindingModes))
	}
	return append(allErrs, validateAllowedTopologies(sc.AllowedTopologies, field.NewPath("allowedTopologies"))...)
}

// ValidateStorageClassUpdateFields: parameters, provisioner, reclaimPolicy
// and volumeBindingMode never change.
func ValidateStorageClassUpdateFields(sc, old *storagev1.StorageClass) field.ErrorList {
	// Upstream's +k8s:immutable (beta) on each of them answers a change, in
	// its words; the generic store lists them in field order.
	var allErrs field.ErrorList
	if !equality.Semantic.DeepEqual(old.Parameters, sc.Parameters) {
		allErrs = append(allErrs, declarative.Immutable(field.NewPath("parameters")))
	}
	if sc.Provisioner != old.Provisioner {
		allErrs = append(allErrs, declarative.Immutable(field.NewPath("provisioner")))
	}
	if !equality.Semantic.DeepEqual(old.ReclaimPolicy, sc.ReclaimPolicy) {
		allErrs = append(allErrs, declarative.Immutable(field.NewPath("reclaimPolicy")))
	}
	if !equality.Semantic.DeepEqual(old.VolumeBindingMode, sc.VolumeBindingMode) {
		allErrs = append(allErrs, declarative.Immutable(field.NewPath("volumeBindingMode")))
	}
	return allErrs
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func validateProvisioner(p string, fldPath *field.Path) field.ErrorList {
	if p == "" {
		return field.ErrorList{field.Required(fldPath, p)}
	}
	return core.ValidateQualifiedName(strings.ToLower(p), fldPath)
}

func validateParameters(params map[string]string, allowEmpty bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(params) > maxProvisionerParameterLen {
		return append(allErrs, field.TooLong(fldPath, "Provisioner Parameters exceeded max allowed", maxProvisionerParameterLen))
	}
	var total int64
	for _, k := range sortedKeys(params) {
		if k == "" {
			allErrs = append(allErrs, field.Invalid(fldPath, k, "field can not be empty."))
		}
		total += int64(len(k)) + int64(len(params[k]))
	}
	if total > maxProvisionerParameterSize {
		allErrs = append(allErrs, field.TooLong(fldPath, "", maxProvisionerParameterSize))
	}
	if !allowEmpty && len(params) == 0 {
		allErrs = append(allErrs, field.Required(fldPath, "must contain at least one key/value pair"))
	}
	return allErrs
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func validateAllowedTopologies(terms []corev1.TopologySelectorTerm, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	// As v1.37.2's validateAllowedTopologies, which starts its list of
	// seen terms with len(terms) nil maps: a term without expressions
	// equals them (Semantic.DeepEqual), so it is reported as a duplicate
	// even when no other term is empty (kube-apiserver v1.37.2 answers
	// allowedTopologies[1].matchLabelExpressions: Duplicate value: "" for
	// [{k: []}, {}]).
	seen := make([]map[string]map[string]bool, len(terms))
	for i, term := range terms {
		idxPath := fldPath.Index(i)
		exprs, errs := core.ValidateTopologySelectorTerm(term, idxPath)
		allErrs = append(allErrs, errs...)
		for _, s := range seen {
			if core.SameTopologyTerms(exprs, s) {
				allErrs = append(allErrs, field.Duplicate(idxPath.Child("matchLabelExpressions"), ""))
			}
		}
		seen = append(seen, exprs)
	}
	return allErrs
}

// ValidateVolumeAttributesClass checks a class with its metadata.
func ValidateVolumeAttributesClass(vac *storagev1.VolumeAttributesClass) field.ErrorList {
	return append(meta(&vac.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain), ValidateVolumeAttributesClassFields(vac)...)
}

// ValidateVolumeAttributesClassFields: driverName a qualified name,
// parameters not empty and within limits.
func ValidateVolumeAttributesClassFields(vac *storagev1.VolumeAttributesClass) field.ErrorList {
	allErrs := validateProvisioner(vac.DriverName, field.NewPath("driverName"))
	return append(allErrs, validateParameters(vac.Parameters, false, field.NewPath("parameters"))...)
}

// ValidateVolumeAttributesClassUpdateFields: driverName and parameters
// never change.
func ValidateVolumeAttributesClassUpdateFields(vac, old *storagev1.VolumeAttributesClass) field.ErrorList {
	var allErrs field.ErrorList
	if vac.DriverName != old.DriverName {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("driverName"), "updates to driverName are forbidden."))
	}
	if !reflect.DeepEqual(old.Parameters, vac.Parameters) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
	}
	return allErrs
}

// ValidateCSIDriver checks a driver with its metadata.
func ValidateCSIDriver(d *storagev1.CSIDriver) field.ErrorList {
	return append(meta(&d.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain), ValidateCSIDriverFields(d)...)
}

// ValidateCSIDriverFields checks the spec: the defaulted fields set and
// supported. (The name is a DNS subdomain: metadata's rule.)
func ValidateCSIDriverFields(d *storagev1.CSIDriver) field.ErrorList {
	return validateCSIDriverSpec(&d.Spec, field.NewPath("spec"))
}

func validateCSIDriverSpec(spec *storagev1.CSIDriverSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	// "attachedRequired" (sic) is upstream's path.
	if spec.AttachRequired == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("attachedRequired"), ""))
	}
	if spec.PodInfoOnMount == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("podInfoOnMount"), ""))
	}
	if spec.StorageCapacity == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("storageCapacity"), ""))
	}
	// fsGroupPolicy is not required (upstream: "This is not a required
	// field").
	if p := spec.FSGroupPolicy; p != nil && !slices.Contains(supportedFSGroupPolicies, string(*p)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("fsGroupPolicy"), *p, supportedFSGroupPolicies))
	}
	allErrs = append(allErrs, validateTokenRequests(spec.TokenRequests, fldPath.Child("tokenRequests"))...)
	for _, m := range spec.VolumeLifecycleModes {
		if !slices.Contains(supportedLifecycleModes, string(m)) {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("volumeLifecycleModes"), m, supportedLifecycleModes))
		}
	}
	if spec.SELinuxMount == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("seLinuxMount"), ""))
	}
	if p := spec.NodeAllocatableUpdatePeriodSeconds; p != nil && *p < 10 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("nodeAllocatableUpdatePeriodSeconds"), *p, "must be greater than or equal to 10 seconds"))
	}
	if spec.ServiceAccountTokenInSecrets != nil && len(spec.TokenRequests) == 0 {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("serviceAccountTokenInSecrets"), "may only be set when tokenRequests is specified"))
	}
	// Required under VolumeLimitScaling (beta, on in v1.37), as upstream's
	// validatePreventPodSchedulingIfMissing; defaulting sets it.
	if spec.PreventPodSchedulingIfMissing == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("preventPodSchedulingIfMissing"), ""))
	}
	return allErrs
}

func validateTokenRequests(reqs []storagev1.TokenRequest, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[string]bool{}
	for i, r := range reqs {
		p := fldPath.Index(i)
		if seen[r.Audience] {
			allErrs = append(allErrs, field.Duplicate(p.Child("audience"), r.Audience))
			continue
		}
		seen[r.Audience] = true
		if r.ExpirationSeconds == nil {
			continue
		}
		if *r.ExpirationSeconds < 600 {
			allErrs = append(allErrs, field.Invalid(p.Child("expirationSeconds"), *r.ExpirationSeconds, "may not specify a duration less than 10 minutes"))
		}
		if *r.ExpirationSeconds > 1<<32 {
			allErrs = append(allErrs, field.Invalid(p.Child("expirationSeconds"), *r.ExpirationSeconds, "may not specify a duration larger than 2^32 seconds"))
		}
	}
	return allErrs
}

// ValidateCSIDriverUpdateFields: the spec is valid; attachRequired (at
// upstream's path "spec.attachedRequired") and volumeLifecycleModes never
// change.
func ValidateCSIDriverUpdateFields(d, old *storagev1.CSIDriver) field.ErrorList {
	allErrs := validateCSIDriverSpec(&d.Spec, field.NewPath("spec"))
	allErrs = append(allErrs, kvalidation.ValidateImmutableField(d.Spec.AttachRequired, old.Spec.AttachRequired, field.NewPath("spec", "attachedRequired"))...)
	return append(allErrs, kvalidation.ValidateImmutableField(d.Spec.VolumeLifecycleModes, old.Spec.VolumeLifecycleModes, field.NewPath("spec", "volumeLifecycleModes"))...)
}

// ValidateCSINode checks a CSINode with its metadata (named as its node).
func ValidateCSINode(n *storagev1.CSINode) field.ErrorList {
	return append(meta(&n.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain), ValidateCSINodeFields(n)...)
}

// ValidateCSINodeFields checks each driver: a CSI driver name, once; a
// node ID of at most 256 characters; a non-negative allocatable count;
// topology keys non-empty, unique label names.
func ValidateCSINodeFields(n *storagev1.CSINode) field.ErrorList {
	var allErrs field.ErrorList
	fldPath := field.NewPath("spec", "drivers")
	names := map[string]bool{}
	for i, d := range n.Spec.Drivers {
		p := fldPath.Index(i)
		allErrs = append(allErrs, core.ValidateCSIDriverName(d.Name, p.Child("name"))...)
		if d.NodeID == "" {
			allErrs = append(allErrs, field.Required(p.Child("nodeID"), d.NodeID))
		}
		if len(d.NodeID) > csiNodeIDMaxLength {
			allErrs = append(allErrs, field.Invalid(p.Child("nodeID"), d.NodeID, fmt.Sprintf("must be %d characters or less", csiNodeIDMaxLength)))
		}
		if d.Allocatable != nil && d.Allocatable.Count != nil && *d.Allocatable.Count < 0 {
			allErrs = append(allErrs, field.Invalid(p.Child("allocatable", "count"), *d.Allocatable.Count, "must be greater than or equal to 0"))
		}
		if names[d.Name] {
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), d.Name))
		}
		keys := map[string]bool{}
		for _, k := range d.TopologyKeys {
			if k == "" {
				allErrs = append(allErrs, field.Required(p, k))
			}
			if keys[k] {
				allErrs = append(allErrs, field.Duplicate(p, k))
			}
			keys[k] = true
			allErrs = append(allErrs, core.ValidateQualifiedName(k, p)...)
		}
		names[d.Name] = true
	}
	return allErrs
}

// ValidateCSINodeUpdateFields: valid, and each driver kept is unchanged
// but for its allocatable count (MutableCSINodeAllocatableCount, on by
// default): upstream reports a change as "spec.drivers: field is
// immutable".
func ValidateCSINodeUpdateFields(n, old *storagev1.CSINode) field.ErrorList {
	allErrs := ValidateCSINodeFields(n)
	for _, od := range old.Spec.Drivers {
		for _, nd := range n.Spec.Drivers {
			if od.Name != nd.Name {
				continue
			}
			o, c := od.DeepCopy(), nd.DeepCopy()
			o.Allocatable, c.Allocatable = nil, nil
			allErrs = append(allErrs, kvalidation.ValidateImmutableField(c, o, field.NewPath("spec", "drivers"))...)
		}
	}
	return allErrs
}

// CSIStorageCapacityOptions relax checks for stored objects.
type CSIStorageCapacityOptions struct {
	AllowInvalidLabelValueInSelector bool
}

// ValidateCSIStorageCapacity checks a capacity with its metadata.
func ValidateCSIStorageCapacity(c *storagev1.CSIStorageCapacity, opts CSIStorageCapacityOptions) field.ErrorList {
	return append(meta(&c.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain), ValidateCSIStorageCapacityFields(c, opts)...)
}

// ValidateCSIStorageCapacityFields: nodeTopology a valid selector,
// storageClassName a valid class name, capacity not negative.
func ValidateCSIStorageCapacityFields(c *storagev1.CSIStorageCapacity, opts CSIStorageCapacityOptions) field.ErrorList {
	allErrs := metav1validation.ValidateLabelSelector(c.NodeTopology, metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.AllowInvalidLabelValueInSelector}, field.NewPath("nodeTopology"))
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(c.StorageClassName, false) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("storageClassName"), c.StorageClassName, msg))
	}
	if c.Capacity != nil {
		allErrs = append(allErrs, core.ValidateNonnegativeQuantity(*c.Capacity, field.NewPath("capacity"))...)
	}
	return allErrs
}

// ValidateCSIStorageCapacityUpdateFields: valid; nodeTopology and
// storageClassName never change.
func ValidateCSIStorageCapacityUpdateFields(c, old *storagev1.CSIStorageCapacity) field.ErrorList {
	opts := CSIStorageCapacityOptions{AllowInvalidLabelValueInSelector: metav1validation.LabelSelectorHasInvalidLabelValue(old.NodeTopology)}
	allErrs := ValidateCSIStorageCapacityFields(c, opts)
	allErrs = append(allErrs, kvalidation.ValidateImmutableField(c.NodeTopology, old.NodeTopology, field.NewPath("nodeTopology"))...)
	return append(allErrs, kvalidation.ValidateImmutableField(c.StorageClassName, old.StorageClassName, field.NewPath("storageClassName"))...)
}

// ValidateVolumeAttachment checks an attachment with its metadata.
func ValidateVolumeAttachment(va *storagev1.VolumeAttachment) field.ErrorList {
	return append(meta(&va.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain), ValidateVolumeAttachmentFields(va)...)
}

// ValidateVolumeAttachmentFields checks a new attachment as upstream's
// ValidateVolumeAttachment (k8s.io/kubernetes@v1.37.2
// pkg/apis/storage/validation): attacher a CSI driver name, exactly one
// source (a valid PV name or inline spec), nodeName a node name; status
// metadata and error messages within limits. The attacher's rules are beta
// declarative ones upstream (+k8s:required, +k8s:format=k8s-long-name-caseless,
// +k8s:maxLength=63, pkg/apis/storage/v1/zz_generated.validations.go): on
// create their errors come last, in the declarative validators' words.
func ValidateVolumeAttachmentFields(va *storagev1.VolumeAttachment) field.ErrorList {
	allErrs := validateVolumeAttachment(va, false)
	return append(allErrs, declarativeAttacher(va.Spec.Attacher, field.NewPath("spec", "attacher"))...)
}

// validateVolumeAttachment is upstream's ValidateVolumeAttachment, its
// attacher errors the handwritten ones when handwrittenAttacher is set.
func validateVolumeAttachment(va *storagev1.VolumeAttachment, handwrittenAttacher bool) field.ErrorList {
	spec := field.NewPath("spec")
	var allErrs field.ErrorList
	if handwrittenAttacher {
		allErrs = append(allErrs, core.ValidateCSIDriverName(va.Spec.Attacher, spec.Child("attacher"))...)
	}
	src := &va.Spec.Source
	srcPath := spec.Child("source")
	switch {
	case src.InlineVolumeSpec == nil && src.PersistentVolumeName == nil:
		allErrs = append(allErrs, field.Required(srcPath, "must specify exactly one of inlineVolumeSpec and persistentVolumeName"))
	case src.InlineVolumeSpec != nil && src.PersistentVolumeName != nil:
		allErrs = append(allErrs, field.Forbidden(srcPath, "must specify exactly one of inlineVolumeSpec and persistentVolumeName"))
	case src.PersistentVolumeName != nil:
		if *src.PersistentVolumeName == "" {
			allErrs = append(allErrs, field.Required(srcPath.Child("persistentVolumeName"), "must specify non empty persistentVolumeName"))
		}
	default:
		allErrs = append(allErrs, core.ValidateInlinePersistentVolumeSpec(src.InlineVolumeSpec, srcPath.Child("inlineVolumeSpec"))...)
	}
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(va.Spec.NodeName, false) {
		allErrs = append(allErrs, field.Invalid(spec.Child("nodeName"), va.Spec.NodeName, msg))
	}
	allErrs = append(allErrs, validateVolumeAttachmentStatus(&va.Status, field.NewPath("status"))...)
	if n := src.PersistentVolumeName; n != nil {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(*n, false) {
			allErrs = append(allErrs, field.Invalid(srcPath.Child("persistentVolumeName"), *n, msg))
		}
	}
	return allErrs
}

// declarativeAttacher returns the errors of the declarative rules on
// spec.attacher: Required alone when empty, else the caseless DNS subdomain
// format, then at most 63 characters.
func declarativeAttacher(attacher string, fldPath *field.Path) field.ErrorList {
	if attacher == "" {
		return field.ErrorList{declarative.Required(fldPath)}
	}
	errs := declarative.LongNameCaseless(fldPath, attacher)
	return append(errs, declarative.MaxLength(fldPath, attacher, 63)...)
}

func validateVolumeAttachmentStatus(s *storagev1.VolumeAttachmentStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	var size int64
	for k, v := range s.AttachmentMetadata {
		size += int64(len(k)) + int64(len(v))
	}
	if size > maxAttachedVolumeMetadataSize {
		allErrs = append(allErrs, field.TooLong(fldPath.Child("attachmentMetadata"), "", maxAttachedVolumeMetadataSize))
	}
	allErrs = append(allErrs, validateVolumeError(s.AttachError, fldPath.Child("attachError"))...)
	return append(allErrs, validateVolumeError(s.DetachError, fldPath.Child("detachError"))...)
}

func validateVolumeError(e *storagev1.VolumeError, fldPath *field.Path) field.ErrorList {
	if e == nil {
		return nil
	}
	var allErrs field.ErrorList
	if len(e.Message) > maxVolumeErrorMessageSize {
		allErrs = append(allErrs, field.TooLong(fldPath.Child("message"), "", maxVolumeErrorMessageSize))
	}
	if c := e.ErrorCode; c != nil && *c < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("errorCode"), *c, utilvalidation.InclusiveRangeError(0, math.MaxInt32)))
	}
	return allErrs
}

// ValidateVolumeAttachmentUpdateFields checks an update (of the object or
// its status) as upstream's ValidateVolumeAttachmentUpdate: valid, and the
// spec never changes. The spec's immutability is a beta declarative rule
// (+k8s:immutable, "Invalid value: null", last); it stops the declarative
// walk of the spec, and an unchanged spec is not validated declaratively,
// so on update the attacher's errors are the handwritten ones, in place.
func ValidateVolumeAttachmentUpdateFields(va, old *storagev1.VolumeAttachment) field.ErrorList {
	allErrs := validateVolumeAttachment(va, true)
	if !equality.Semantic.DeepEqual(old.Spec, va.Spec) {
		allErrs = append(allErrs, declarative.Immutable(field.NewPath("spec")))
	}
	return allErrs
}

// maxStorageHealthConditions is how many conditions one driver may report.
const maxStorageHealthConditions = 16

// ValidateCSINodeStatusFields checks a csinodes/status update's
// status.storageHealth as upstream's ValidateCSINodeStatusUpdate
// (pkg/apis/storage/validation, v1.37.2): each entry names a CSI driver,
// once; at most 16 conditions, each with a known status, a condition
// reason, a message of at most 1024 characters, a known access and volume
// mode. (Metadata is checked by the store, as for every update.)
func ValidateCSINodeStatusFields(n *storagev1.CSINode) field.ErrorList {
	var allErrs field.ErrorList
	fldPath := field.NewPath("status", "storageHealth")
	seen := map[string]bool{}
	for i, h := range n.Status.StorageHealth {
		p := fldPath.Index(i)
		if seen[h.Name] {
			allErrs = append(allErrs, field.Duplicate(p, h.Name))
		}
		seen[h.Name] = true
		if h.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		} else {
			allErrs = append(allErrs, core.ValidateCSIDriverName(h.Name, p.Child("name"))...)
		}
		if len(h.HealthConditions) > maxStorageHealthConditions {
			allErrs = append(allErrs, field.TooMany(p.Child("healthConditions"), len(h.HealthConditions), maxStorageHealthConditions))
			continue
		}
		for j, c := range h.HealthConditions {
			allErrs = append(allErrs, validateStorageHealthCondition(c, p.Child("healthConditions").Index(j))...)
		}
	}
	return allErrs
}

func validateStorageHealthCondition(c storagev1.StorageHealthCondition, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	// Sorted, as upstream lists them (sets.List).
	statuses := []storagev1.StorageHealthStatusType{storagev1.StorageDegraded, storagev1.StorageUnreachable}
	if !slices.Contains(statuses, c.Status) {
		allErrs = append(allErrs, field.NotSupported(p.Child("status"), c.Status, statuses))
	}
	if c.Reason == "" {
		allErrs = append(allErrs, field.Required(p.Child("reason"), ""))
	} else {
		for _, msg := range metav1validation.IsValidConditionReason(c.Reason) {
			allErrs = append(allErrs, field.Invalid(p.Child("reason"), c.Reason, msg))
		}
		if len(c.Reason) > 256 {
			allErrs = append(allErrs, field.TooLong(p.Child("reason"), c.Reason, 256))
		}
	}
	if len(c.Message) > 1024 {
		allErrs = append(allErrs, field.TooLong(p.Child("message"), c.Message, 1024))
	}
	modes := []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOnce, corev1.ReadWriteOncePod}
	if c.AccessMode != nil && !slices.Contains(modes, *c.AccessMode) {
		allErrs = append(allErrs, field.NotSupported(p.Child("accessMode"), *c.AccessMode, modes))
	}
	volumeModes := []corev1.PersistentVolumeMode{corev1.PersistentVolumeFilesystem, corev1.PersistentVolumeBlock}
	if c.VolumeMode != nil && !slices.Contains(volumeModes, *c.VolumeMode) {
		allErrs = append(allErrs, field.NotSupported(p.Child("volumeMode"), *c.VolumeMode, volumeModes))
	}
	return allErrs
}
