package core

import (
	"net"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The volume sources of persistent volumes and their node affinity, as
// upstream's ValidatePersistentVolumeSpec checks them (kubernetes
// pkg/apis/core/validation, v1.37). Upstream's field paths are kept,
// including its slips ("persistentDisk" for gcePersistentDisk errors,
// "cephFS" then "cephfs").

const (
	oneVolumeTypeMsg = "may not specify more than 1 volume type"
	lunRangeMsg      = "must be between 0 and 255, inclusive"
)

var (
	iqnRegexp = regexp.MustCompile(`iqn\.\d{4}-\d{2}\.([[:alnum:]-.]+)(:[^,;*&$|\s]+)$`)
	euiRegexp = regexp.MustCompile(`^eui.[[:alnum:]]{16}$`)
	naaRegexp = regexp.MustCompile(`^naa.[[:alnum:]]{32}$`)
)

// pvSource is one volume source of a persistent volume: whether it is
// set, the name of its field (for "more than 1 volume type"), and its
// checks.
type pvSource struct {
	set      bool
	name     string
	validate func() field.ErrorList
}

// validatePersistentVolumeSource checks that exactly one source is set,
// and that source.
func validatePersistentVolumeSource(s *corev1.PersistentVolumeSource, pvName string, nodeAffinitySet bool, fldPath *field.Path) field.ErrorList {
	p := fldPath.Child
	sources := []pvSource{
		{s.HostPath != nil, "hostPath", func() field.ErrorList { return pvHostPathErrors(s.HostPath.Path, s.HostPath.Type, p("hostPath")) }},
		{s.GCEPersistentDisk != nil, "gcePersistentDisk", func() field.ErrorList {
			return pvDiskErrors("pdName", s.GCEPersistentDisk.PDName, s.GCEPersistentDisk.Partition, p("persistentDisk"))
		}},
		{s.AWSElasticBlockStore != nil, "awsElasticBlockStore", func() field.ErrorList {
			return pvDiskErrors("volumeID", s.AWSElasticBlockStore.VolumeID, s.AWSElasticBlockStore.Partition, p("awsElasticBlockStore"))
		}},
		{s.Glusterfs != nil, "glusterfs", func() field.ErrorList { return pvGlusterfsErrors(s.Glusterfs, p("glusterfs")) }},
		{s.Flocker != nil, "flocker", func() field.ErrorList { return pvFlockerErrors(s.Flocker, p("flocker")) }},
		{s.NFS != nil, "nfs", func() field.ErrorList { return pvNFSErrors(s.NFS, p("nfs")) }},
		{s.RBD != nil, "rbd", func() field.ErrorList {
			errs := pvRequired(p("rbd"), "image", s.RBD.RBDImage)
			if len(s.RBD.CephMonitors) == 0 {
				errs = append(field.ErrorList{field.Required(p("rbd").Child("monitors"), "")}, errs...)
			}
			return errs
		}},
		{s.Quobyte != nil, "quobyte", func() field.ErrorList { return pvQuobyteErrors(s.Quobyte, p("quobyte")) }},
		{s.CephFS != nil, "cephFS", func() field.ErrorList {
			if len(s.CephFS.Monitors) == 0 {
				return field.ErrorList{field.Required(p("cephfs").Child("monitors"), "")}
			}
			return nil
		}},
		{s.ISCSI != nil, "iscsi", func() field.ErrorList { return pvISCSIErrors(s.ISCSI, pvName, p("iscsi")) }},
		{s.Cinder != nil, "cinder", func() field.ErrorList {
			errs := pvRequired(p("cinder"), "volumeID", s.Cinder.VolumeID)
			if ref := s.Cinder.SecretRef; ref != nil {
				errs = append(errs, pvRequired(p("cinder").Child("secretRef"), "name", ref.Name, "namespace", ref.Namespace)...)
			}
			return errs
		}},
		{s.FC != nil, "fc", func() field.ErrorList { return pvFCErrors(s.FC, p("fc")) }},
		{s.FlexVolume != nil, "flexVolume", func() field.ErrorList { return pvFlexErrors(s.FlexVolume, p("flexVolume")) }},
		{s.AzureFile != nil, "azureFile", func() field.ErrorList {
			errs := pvRequired(p("azureFile"), "secretName", s.AzureFile.SecretName, "shareName", s.AzureFile.ShareName)
			if ns := s.AzureFile.SecretNamespace; ns != nil && *ns == "" {
				errs = append(errs, field.Required(p("azureFile").Child("secretNamespace"), ""))
			}
			return errs
		}},
		{s.VsphereVolume != nil, "vsphereVolume", func() field.ErrorList {
			return pvRequired(p("vsphereVolume"), "volumePath", s.VsphereVolume.VolumePath)
		}},
		{s.PhotonPersistentDisk != nil, "photonPersistentDisk", func() field.ErrorList {
			return pvRequired(p("photonPersistentDisk"), "pdID", s.PhotonPersistentDisk.PdID)
		}},
		{s.PortworxVolume != nil, "portworxVolume", func() field.ErrorList {
			return pvRequired(p("portworxVolume"), "volumeID", s.PortworxVolume.VolumeID)
		}},
		{s.AzureDisk != nil, "azureDisk", func() field.ErrorList { return pvAzureDiskErrors(s.AzureDisk, p("azureDisk")) }},
		{s.ScaleIO != nil, "scaleIO", func() field.ErrorList {
			return pvRequired(p("scaleIO"), "gateway", s.ScaleIO.Gateway, "system", s.ScaleIO.System, "volumeName", s.ScaleIO.VolumeName)
		}},
		{s.Local != nil, "local", func() field.ErrorList {
			var errs field.ErrorList
			if s.Local.Path == "" {
				errs = append(errs, field.Required(p("local").Child("path"), ""))
			} else {
				errs = append(errs, pvNoBacksteps(s.Local.Path, p("local").Child("path"))...)
			}
			if !nodeAffinitySet {
				errs = append(errs, field.Required(p("nodeAffinity"), "Local volume requires node affinity"))
			}
			return errs
		}},
		{s.StorageOS != nil, "storageos", func() field.ErrorList { return pvStorageOSErrors(s.StorageOS, p("storageos")) }},
		{s.CSI != nil, "csi", func() field.ErrorList { return pvCSIErrors(s.CSI, p("csi")) }},
	}
	var allErrs field.ErrorList
	n := 0
	for _, src := range sources {
		if !src.set {
			continue
		}
		// Upstream never rejects a flexVolume next to another source: it
		// counts and checks it wherever it comes.
		if n > 0 && src.name != "flexVolume" {
			allErrs = append(allErrs, field.Forbidden(p(src.name), oneVolumeTypeMsg))
			continue
		}
		n++
		allErrs = append(allErrs, src.validate()...)
	}
	if n == 0 {
		allErrs = append(allErrs, field.Required(fldPath, "must specify a volume type"))
	}
	return allErrs
}

// pvRequired is Required for each empty value; pairs are a child name and
// its value.
func pvRequired(fldPath *field.Path, pairs ...string) field.ErrorList {
	var allErrs field.ErrorList
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child(pairs[i]), ""))
		}
	}
	return allErrs
}

func pvNoBacksteps(p string, fldPath *field.Path) field.ErrorList {
	if slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..") {
		return field.ErrorList{field.Invalid(fldPath, p, "must not contain '..'")}
	}
	return nil
}

var hostPathTypes = []corev1.HostPathType{
	corev1.HostPathUnset, corev1.HostPathBlockDev, corev1.HostPathCharDev, corev1.HostPathDirectory,
	corev1.HostPathDirectoryOrCreate, corev1.HostPathFile, corev1.HostPathFileOrCreate, corev1.HostPathSocket,
}

func pvHostPathErrors(p string, t *corev1.HostPathType, fldPath *field.Path) field.ErrorList {
	if p == "" {
		return field.ErrorList{field.Required(fldPath.Child("path"), "")}
	}
	allErrs := pvNoBacksteps(p, fldPath.Child("path"))
	if t != nil && !slices.Contains(hostPathTypes, *t) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), t, hostPathTypes))
	}
	return allErrs
}

func pvDiskErrors(idName, id string, partition int32, fldPath *field.Path) field.ErrorList {
	allErrs := pvRequired(fldPath, idName, id)
	if partition < 0 || partition > 255 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("partition"), partition, validation.InclusiveRangeError(1, 255)))
	}
	return allErrs
}

func pvGlusterfsErrors(g *corev1.GlusterfsPersistentVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := pvRequired(fldPath, "endpoints", g.EndpointsName, "path", g.Path)
	if ns := g.EndpointsNamespace; ns != nil {
		if *ns == "" {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("endpointsNamespace"), *ns, "if the endpointnamespace is set, it must be a valid namespace name"))
		} else {
			for _, msg := range apimachineryvalidation.ValidateNamespaceName(*ns, false) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("endpointsNamespace"), *ns, msg))
			}
		}
	}
	return allErrs
}

func pvFlockerErrors(f *corev1.FlockerVolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if f.DatasetName == "" && f.DatasetUUID == "" {
		allErrs = append(allErrs, field.Required(fldPath, "one of datasetName and datasetUUID is required"))
	}
	if f.DatasetName != "" && f.DatasetUUID != "" {
		allErrs = append(allErrs, field.Invalid(fldPath, "resource", "datasetName and datasetUUID can not be specified simultaneously"))
	}
	if strings.Contains(f.DatasetName, "/") {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("datasetName"), f.DatasetName, "must not contain '/'"))
	}
	return allErrs
}

func pvNFSErrors(nfs *corev1.NFSVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := pvRequired(fldPath, "server", nfs.Server, "path", nfs.Path)
	if !path.IsAbs(nfs.Path) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("path"), nfs.Path, "must be an absolute path"))
	}
	return allErrs
}

func pvQuobyteErrors(q *corev1.QuobyteVolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case q.Registry == "":
		allErrs = append(allErrs, field.Required(fldPath.Child("registry"), "must be a host:port pair or multiple pairs separated by commas"))
	case len(q.Tenant) >= 65:
		allErrs = append(allErrs, field.Required(fldPath.Child("tenant"), "must be a UUID and may not exceed a length of 64 characters"))
	default:
		for _, pair := range strings.Split(q.Registry, ",") {
			if _, _, err := net.SplitHostPort(pair); err != nil {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("registry"), q.Registry, "must be a host:port pair or multiple pairs separated by commas"))
			}
		}
	}
	return append(allErrs, pvRequired(fldPath, "volume", q.Volume)...)
}

// iqnErrors checks an iSCSI qualified name (or EUI, or NAA name) at
// fldPath.
func iqnErrors(name string, fldPath *field.Path) field.ErrorList {
	switch {
	case !strings.HasPrefix(name, "iqn") && !strings.HasPrefix(name, "eui") && !strings.HasPrefix(name, "naa"),
		strings.HasPrefix(name, "iqn") && !iqnRegexp.MatchString(name),
		strings.HasPrefix(name, "eui") && !euiRegexp.MatchString(name),
		strings.HasPrefix(name, "naa") && !naaRegexp.MatchString(name):
		return field.ErrorList{field.Invalid(fldPath, name, "must be valid format")}
	}
	return nil
}

func pvISCSIErrors(iscsi *corev1.ISCSIPersistentVolumeSource, pvName string, fldPath *field.Path) field.ErrorList {
	allErrs := pvRequired(fldPath, "targetPortal", iscsi.TargetPortal)
	if iscsi.InitiatorName != nil && len(pvName+":"+iscsi.TargetPortal) > 64 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("targetportal"), iscsi.TargetPortal,
			"Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified."))
	}
	if iscsi.IQN == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("iqn"), ""))
	} else {
		allErrs = append(allErrs, iqnErrors(iscsi.IQN, fldPath.Child("iqn"))...)
	}
	if iscsi.Lun < 0 || iscsi.Lun > 255 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("lun"), iscsi.Lun, lunRangeMsg))
	}
	if (iscsi.DiscoveryCHAPAuth || iscsi.SessionCHAPAuth) && iscsi.SecretRef == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("secretRef"), ""))
	}
	if iscsi.SecretRef != nil && iscsi.SecretRef.Name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("secretRef", "name"), ""))
	}
	if iscsi.InitiatorName != nil {
		allErrs = append(allErrs, iqnErrors(*iscsi.InitiatorName, fldPath.Child("initiatorname"))...)
	}
	return allErrs
}

func pvFCErrors(fc *corev1.FCVolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(fc.TargetWWNs) < 1 && len(fc.WWIDs) < 1 {
		allErrs = append(allErrs, field.Required(fldPath.Child("targetWWNs"), "must specify either targetWWNs or wwids, but not both"))
	}
	if len(fc.TargetWWNs) != 0 && len(fc.WWIDs) != 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("targetWWNs"), fc.TargetWWNs, "targetWWNs and wwids can not be specified simultaneously"))
	}
	if len(fc.TargetWWNs) != 0 {
		if fc.Lun == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("lun"), "lun is required if targetWWNs is specified"))
		} else if *fc.Lun < 0 || *fc.Lun > 255 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("lun"), fc.Lun, lunRangeMsg))
		}
	}
	return allErrs
}

func pvFlexErrors(fv *corev1.FlexPersistentVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := pvRequired(fldPath, "driver", fv.Driver)
	keys := make([]string, 0, len(fv.Options))
	for k := range fv.Options {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		ns := k
		if before, _, found := strings.Cut(k, "/"); found {
			ns = before
		}
		normalized := "." + strings.ToLower(ns)
		if strings.HasSuffix(normalized, ".kubernetes.io") || strings.HasSuffix(normalized, ".k8s.io") {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("options").Key(k), k, "kubernetes.io and k8s.io namespaces are reserved"))
		}
	}
	return allErrs
}

var (
	azureCachingModes = []corev1.AzureDataDiskCachingMode{corev1.AzureDataDiskCachingNone, corev1.AzureDataDiskCachingReadOnly, corev1.AzureDataDiskCachingReadWrite}
	azureDiskKinds    = []corev1.AzureDataDiskKind{corev1.AzureDedicatedBlobDisk, corev1.AzureManagedDisk, corev1.AzureSharedBlobDisk}
)

func pvAzureDiskErrors(a *corev1.AzureDiskVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := pvRequired(fldPath, "diskName", a.DiskName, "diskURI", a.DataDiskURI)
	if a.CachingMode != nil && !slices.Contains(azureCachingModes, *a.CachingMode) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("cachingMode"), *a.CachingMode, azureCachingModes))
	}
	if a.Kind != nil && !slices.Contains(azureDiskKinds, *a.Kind) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("kind"), *a.Kind, azureDiskKinds))
	}
	if a.Kind != nil && *a.Kind == corev1.AzureManagedDisk && !strings.HasPrefix(a.DataDiskURI, "/subscriptions/") {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("diskURI"), a.DataDiskURI,
			[]string{"/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"}))
	}
	if a.Kind != nil && *a.Kind != corev1.AzureManagedDisk && !strings.HasPrefix(a.DataDiskURI, "https://") {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("diskURI"), a.DataDiskURI,
			[]string{"https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"}))
	}
	return allErrs
}

func dnsLabelErrors(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

func pvStorageOSErrors(s *corev1.StorageOSPersistentVolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if s.VolumeName == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("volumeName"), ""))
	} else {
		allErrs = append(allErrs, dnsLabelErrors(s.VolumeName, fldPath.Child("volumeName"))...)
	}
	if s.VolumeNamespace != "" {
		allErrs = append(allErrs, dnsLabelErrors(s.VolumeNamespace, fldPath.Child("volumeNamespace"))...)
	}
	if ref := s.SecretRef; ref != nil {
		allErrs = append(allErrs, pvRequired(fldPath.Child("secretRef"), "name", ref.Name, "namespace", ref.Namespace)...)
	}
	return allErrs
}

// csiDriverNameErrors: required, at most 63 characters, a DNS subdomain
// once lower-cased.
func csiDriverNameErrors(driver string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if driver == "" {
		allErrs = append(allErrs, field.Required(fldPath, ""))
	}
	if len(driver) > 63 {
		allErrs = append(allErrs, field.TooLong(fldPath, "", 63))
	}
	for _, msg := range validation.IsDNS1123Subdomain(strings.ToLower(driver)) {
		allErrs = append(allErrs, field.Invalid(fldPath, driver, msg))
	}
	return allErrs
}

// pvSecretReferenceErrors: a secret named by a DNS subdomain in a
// namespace named by a DNS label.
func pvSecretReferenceErrors(ref *corev1.SecretReference, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if ref.Name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(ref.Name) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), ref.Name, msg))
		}
	}
	if ref.Namespace == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("namespace"), ""))
	} else {
		allErrs = append(allErrs, dnsLabelErrors(ref.Namespace, fldPath.Child("namespace"))...)
	}
	return allErrs
}

func pvCSIErrors(csi *corev1.CSIPersistentVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := csiDriverNameErrors(csi.Driver, fldPath.Child("driver"))
	allErrs = append(allErrs, pvRequired(fldPath, "volumeHandle", csi.VolumeHandle)...)
	for _, ref := range []struct {
		name string
		ref  *corev1.SecretReference
	}{
		{"controllerPublishSecretRef", csi.ControllerPublishSecretRef},
		{"controllerExpandSecretRef", csi.ControllerExpandSecretRef},
		{"nodePublishSecretRef", csi.NodePublishSecretRef},
		{"nodeExpandSecretRef", csi.NodeExpandSecretRef},
	} {
		if ref.ref != nil {
			allErrs = append(allErrs, pvSecretReferenceErrors(ref.ref, fldPath.Child(ref.name))...)
		}
	}
	return allErrs
}

// volumeNodeSelectorErrors checks the required node selector of a volume's
// node affinity: at least one term; matchExpressions with a label key, an
// operator and values that fit it; matchFields on metadata.name only.
func volumeNodeSelectorErrors(ns *corev1.NodeSelector, allowInvalidLabelValue bool, fldPath *field.Path) field.ErrorList {
	termsPath := fldPath.Child("nodeSelectorTerms")
	if len(ns.NodeSelectorTerms) == 0 {
		return field.ErrorList{field.Required(termsPath, "must have at least one node selector term")}
	}
	var allErrs field.ErrorList
	for i, term := range ns.NodeSelectorTerms {
		tp := termsPath.Index(i)
		for j, rq := range term.MatchExpressions {
			allErrs = append(allErrs, nodeSelectorRequirementErrors(rq, allowInvalidLabelValue, tp.Child("matchExpressions").Index(j))...)
		}
		for j, rq := range term.MatchFields {
			allErrs = append(allErrs, nodeFieldSelectorRequirementErrors(rq, tp.Child("matchFields").Index(j))...)
		}
	}
	return allErrs
}

func nodeSelectorRequirementErrors(rq corev1.NodeSelectorRequirement, allowInvalidLabelValue bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch rq.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(rq.Values) == 0 {
			allErrs = append(allErrs, field.Required(fldPath.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
		}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(rq.Values) > 0 {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(rq.Values) != 1 {
			allErrs = append(allErrs, field.Required(fldPath.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
		}
	default:
		allErrs = append(allErrs, field.Invalid(fldPath.Child("operator"), rq.Operator, "not a valid selector operator"))
	}
	allErrs = append(allErrs, metav1validation.ValidateLabelName(rq.Key, fldPath.Child("key"))...)
	if !allowInvalidLabelValue {
		for i, v := range rq.Values {
			for _, msg := range validation.IsValidLabelValue(v) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("values").Index(i), v, msg))
			}
		}
	}
	return allErrs
}

func nodeFieldSelectorRequirementErrors(rq corev1.NodeSelectorRequirement, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch rq.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(rq.Values) != 1 {
			allErrs = append(allErrs, field.Required(fldPath.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
		}
	default:
		allErrs = append(allErrs, field.Invalid(fldPath.Child("operator"), rq.Operator, "not a valid selector operator"))
	}
	if rq.Key != metav1.ObjectNameField {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("key"), rq.Key, "not a valid field selector key"))
	} else {
		for i, v := range rq.Values {
			for _, msg := range ValidateNodeName(v, false) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("values").Index(i), v, msg))
			}
		}
	}
	return allErrs
}
