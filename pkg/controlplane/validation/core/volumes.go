package core

import (
	"fmt"
	"net"
	"path"
	"regexp"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	// Compiled on first use, not at package initialisation (which every
	// process start pays for).
	iscsiInitiatorIqnRegex = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`iqn\.\d{4}-\d{2}\.([[:alnum:]-.]+)(:[^,;*&$|\s]+)$`) })
	iscsiInitiatorEuiRegex = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^eui.[[:alnum:]]{16}$`) })
	iscsiInitiatorNaaRegex = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^naa.[[:alnum:]]{32}$`) })
	pdPartitionErrorMsg    = validation.InclusiveRangeError(1, 255)
)

// ValidateVolumes checks a pod's volumes and returns those without errors
// by name, for the containers' mounts. podMeta, when it names a pod,
// lets ephemeral volumes' claim names be checked.
func ValidateVolumes(volumes []corev1.Volume, podMeta *metav1.ObjectMeta, fldPath *field.Path, opts PodValidationOptions) (map[string]corev1.VolumeSource, field.ErrorList) {
	var allErrs field.ErrorList
	names := map[string]bool{}
	createdPVCs := map[string]bool{}
	if podMeta != nil && podMeta.Name != "" {
		for _, v := range volumes {
			if v.Ephemeral != nil {
				createdPVCs[podMeta.Name+"-"+v.Name] = true
			}
		}
	}
	vols := make(map[string]corev1.VolumeSource, len(volumes))
	for i := range volumes {
		v := &volumes[i]
		idxPath := fldPath.Index(i)
		namePath := idxPath.Child("name")
		el := validateVolumeSource(&v.VolumeSource, idxPath, v.Name, podMeta, opts)
		if v.Name == "" {
			el = append(el, field.Required(namePath, ""))
		} else {
			el = append(el, ValidateDNS1123Label(v.Name, namePath)...)
		}
		if names[v.Name] {
			el = append(el, field.Duplicate(namePath, v.Name))
		}
		if len(el) == 0 {
			names[v.Name] = true
			vols[v.Name] = v.VolumeSource
		} else {
			allErrs = append(allErrs, el...)
		}
		if v.PersistentVolumeClaim != nil && createdPVCs[v.PersistentVolumeClaim.ClaimName] {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("persistentVolumeClaim").Child("claimName"), v.PersistentVolumeClaim.ClaimName,
				"must not reference a PVC that gets created for an ephemeral volume"))
		}
	}
	return vols, allErrs
}

// volumeSourceCheck is one source of a volume: set when non-nil, its path
// element and its validation.
type volumeSourceCheck struct {
	set      bool
	name     string
	validate func() field.ErrorList
}

// validateVolumeSource requires exactly one source and validates it, in
// upstream's order (the first set source is validated, the others are
// Forbidden).
func validateVolumeSource(s *corev1.VolumeSource, fldPath *field.Path, volName string, podMeta *metav1.ObjectMeta, opts PodValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	p := fldPath.Child
	checks := []volumeSourceCheck{
		{s.EmptyDir != nil, "emptyDir", func() field.ErrorList {
			if s.EmptyDir.SizeLimit != nil && s.EmptyDir.SizeLimit.Cmp(resource.Quantity{}) < 0 {
				return field.ErrorList{field.Forbidden(p("emptyDir").Child("sizeLimit"), "SizeLimit field must be a valid resource quantity")}
			}
			return nil
		}},
		{s.HostPath != nil, "hostPath", func() field.ErrorList { return validateHostPathVolumeSource(s.HostPath, p("hostPath")) }},
		{s.GitRepo != nil, "gitRepo", func() field.ErrorList {
			var errs field.ErrorList
			if s.GitRepo.Repository == "" {
				errs = append(errs, field.Required(p("gitRepo").Child("repository"), ""))
			}
			return append(errs, validateLocalDescendingPath(s.GitRepo.Directory, p("gitRepo").Child("directory"))...)
		}},
		{s.GCEPersistentDisk != nil, "gcePersistentDisk", func() field.ErrorList {
			return validatePD(s.GCEPersistentDisk.PDName, "pdName", s.GCEPersistentDisk.Partition, p("persistentDisk"))
		}},
		{s.AWSElasticBlockStore != nil, "awsElasticBlockStore", func() field.ErrorList {
			return validatePD(s.AWSElasticBlockStore.VolumeID, "volumeID", s.AWSElasticBlockStore.Partition, p("awsElasticBlockStore"))
		}},
		{s.Secret != nil, "secret", func() field.ErrorList { return validateSecretVolumeSource(s.Secret, p("secret")) }},
		{s.NFS != nil, "nfs", func() field.ErrorList { return validateNFSVolumeSource(s.NFS, p("nfs")) }},
		{s.ISCSI != nil, "iscsi", func() field.ErrorList { return validateISCSIVolumeSource(s.ISCSI, p("iscsi")) }},
		{s.Glusterfs != nil, "glusterfs", func() field.ErrorList {
			return requiredStrings(p("glusterfs"), "endpoints", s.Glusterfs.EndpointsName, "path", s.Glusterfs.Path)
		}},
		{s.Flocker != nil, "flocker", func() field.ErrorList { return validateFlockerVolumeSource(s.Flocker, p("flocker")) }},
		{s.PersistentVolumeClaim != nil, "persistentVolumeClaim", func() field.ErrorList {
			return requiredStrings(p("persistentVolumeClaim"), "claimName", s.PersistentVolumeClaim.ClaimName)
		}},
		{s.RBD != nil, "rbd", func() field.ErrorList {
			var errs field.ErrorList
			if len(s.RBD.CephMonitors) == 0 {
				errs = append(errs, field.Required(p("rbd").Child("monitors"), ""))
			}
			return append(errs, requiredStrings(p("rbd"), "image", s.RBD.RBDImage)...)
		}},
		{s.Cinder != nil, "cinder", func() field.ErrorList {
			errs := requiredStrings(p("cinder"), "volumeID", s.Cinder.VolumeID)
			if s.Cinder.SecretRef != nil && s.Cinder.SecretRef.Name == "" {
				errs = append(errs, field.Required(p("cinder").Child("secretRef", "name"), ""))
			}
			return errs
		}},
		{s.CephFS != nil, "cephFS", func() field.ErrorList {
			if len(s.CephFS.Monitors) == 0 {
				return field.ErrorList{field.Required(p("cephfs").Child("monitors"), "")}
			}
			return nil
		}},
		{s.Quobyte != nil, "quobyte", func() field.ErrorList { return validateQuobyteVolumeSource(s.Quobyte, p("quobyte")) }},
		// Upstream's path element for a second source here is "downwarAPI".
		{s.DownwardAPI != nil, "downwarAPI", func() field.ErrorList {
			return validateDownwardAPIVolumeSource(s.DownwardAPI, p("downwardAPI"))
		}},
		{s.FC != nil, "fc", func() field.ErrorList { return validateFCVolumeSource(s.FC, p("fc")) }},
		{s.FlexVolume != nil, "flexVolume", func() field.ErrorList { return validateFlexVolumeSource(s.FlexVolume, p("flexVolume")) }},
		{s.ConfigMap != nil, "configMap", func() field.ErrorList { return validateConfigMapVolumeSource(s.ConfigMap, p("configMap")) }},
		{s.AzureFile != nil, "azureFile", func() field.ErrorList {
			return requiredStrings(p("azureFile"), "secretName", s.AzureFile.SecretName, "shareName", s.AzureFile.ShareName)
		}},
		{s.VsphereVolume != nil, "vsphereVolume", func() field.ErrorList {
			return requiredStrings(p("vsphereVolume"), "volumePath", s.VsphereVolume.VolumePath)
		}},
		{s.PhotonPersistentDisk != nil, "photonPersistentDisk", func() field.ErrorList {
			return requiredStrings(p("photonPersistentDisk"), "pdID", s.PhotonPersistentDisk.PdID)
		}},
		{s.PortworxVolume != nil, "portworxVolume", func() field.ErrorList {
			return requiredStrings(p("portworxVolume"), "volumeID", s.PortworxVolume.VolumeID)
		}},
		{s.AzureDisk != nil, "azureDisk", func() field.ErrorList { return validateAzureDisk(s.AzureDisk, p("azureDisk")) }},
		{s.StorageOS != nil, "storageos", func() field.ErrorList { return validateStorageOSVolumeSource(s.StorageOS, p("storageos")) }},
		{s.Projected != nil, "projected", func() field.ErrorList { return validateProjectedVolumeSource(s.Projected, p("projected"), opts) }},
		{s.ScaleIO != nil, "scaleIO", func() field.ErrorList {
			return requiredStrings(p("scaleIO"), "gateway", s.ScaleIO.Gateway, "system", s.ScaleIO.System, "volumeName", s.ScaleIO.VolumeName)
		}},
		{s.CSI != nil, "csi", func() field.ErrorList { return validateCSIVolumeSource(s.CSI, p("csi")) }},
		{s.Ephemeral != nil, "ephemeral", func() field.ErrorList {
			errs := validateEphemeralVolumeSource(s.Ephemeral, p("ephemeral"))
			if podMeta != nil && podMeta.Name != "" && volName != "" {
				pvcName := podMeta.Name + "-" + volName
				for _, msg := range validateClassName(pvcName, false) {
					errs = append(errs, field.Invalid(p("name"), volName, fmt.Sprintf("PVC name %q: %v", pvcName, msg)))
				}
			}
			return errs
		}},
		{s.Image != nil, "image", func() field.ErrorList {
			var errs field.ErrorList
			if opts.ResourceIsPod && s.Image.Reference == "" {
				errs = append(errs, field.Required(p("image").Child("reference"), ""))
			}
			return append(errs, validatePullPolicy(s.Image.PullPolicy, p("image").Child("pullPolicy"))...)
		}},
	}
	n := 0
	for _, c := range checks {
		if !c.set {
			continue
		}
		if n > 0 {
			allErrs = append(allErrs, field.Forbidden(p(c.name), moreThanOneVolumeType))
			continue
		}
		n++
		allErrs = append(allErrs, c.validate()...)
	}
	// An ISCSI volume's name and portal are checked even when another
	// source came first.
	if s.ISCSI != nil && s.ISCSI.InitiatorName != nil && len(volName+":"+s.ISCSI.TargetPortal) > 64 {
		allErrs = append(allErrs, field.Invalid(p("name"), volName,
			"Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified."))
	}
	if n == 0 {
		allErrs = append(allErrs, field.Required(fldPath, "must specify a volume type"))
	}
	return allErrs
}

// requiredStrings is Required for each empty value; pairs are a child
// name and its value.
func requiredStrings(fldPath *field.Path, pairs ...string) field.ErrorList {
	var allErrs field.ErrorList
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child(pairs[i]), ""))
		}
	}
	return allErrs
}

func validatePD(id, idName string, partition int32, fldPath *field.Path) field.ErrorList {
	allErrs := requiredStrings(fldPath, idName, id)
	if partition < 0 || partition > 255 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("partition"), partition, pdPartitionErrorMsg))
	}
	return allErrs
}

var supportedHostPathTypes = []corev1.HostPathType{
	corev1.HostPathUnset, corev1.HostPathBlockDev, corev1.HostPathCharDev, corev1.HostPathDirectory,
	corev1.HostPathDirectoryOrCreate, corev1.HostPathFile, corev1.HostPathFileOrCreate, corev1.HostPathSocket,
}

func validateHostPathVolumeSource(hp *corev1.HostPathVolumeSource, fldPath *field.Path) field.ErrorList {
	if hp.Path == "" {
		return field.ErrorList{field.Required(fldPath.Child("path"), "")}
	}
	allErrs := validatePathNoBacksteps(hp.Path, fldPath.Child("path"))
	if hp.Type != nil && !contains(supportedHostPathTypes, *hp.Type) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), hp.Type, supportedHostPathTypes))
	}
	return allErrs
}

func validateISCSIVolumeSource(iscsi *corev1.ISCSIVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := requiredStrings(fldPath, "targetPortal", iscsi.TargetPortal)
	if iscsi.IQN == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("iqn"), ""))
	} else {
		allErrs = append(allErrs, validateISCSIName(iscsi.IQN, fldPath.Child("iqn"))...)
	}
	if iscsi.Lun < 0 || iscsi.Lun > 255 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("lun"), iscsi.Lun, validation.InclusiveRangeError(0, 255)))
	}
	if (iscsi.DiscoveryCHAPAuth || iscsi.SessionCHAPAuth) && iscsi.SecretRef == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("secretRef"), ""))
	}
	if iscsi.InitiatorName != nil {
		allErrs = append(allErrs, validateISCSIName(*iscsi.InitiatorName, fldPath.Child("initiatorname"))...)
	}
	return allErrs
}

// validateISCSIName checks an iqn, eui or naa name.
func validateISCSIName(name string, fldPath *field.Path) field.ErrorList {
	switch {
	case strings.HasPrefix(name, "iqn"):
		if !iscsiInitiatorIqnRegex().MatchString(name) {
			return field.ErrorList{field.Invalid(fldPath, name, "must be valid format")}
		}
	case strings.HasPrefix(name, "eui"):
		if !iscsiInitiatorEuiRegex().MatchString(name) {
			return field.ErrorList{field.Invalid(fldPath, name, "must be valid format")}
		}
	case strings.HasPrefix(name, "naa"):
		if !iscsiInitiatorNaaRegex().MatchString(name) {
			return field.ErrorList{field.Invalid(fldPath, name, "must be valid format")}
		}
	default:
		return field.ErrorList{field.Invalid(fldPath, name, "must be valid format starting with iqn, eui, or naa")}
	}
	return nil
}

func validateFCVolumeSource(fc *corev1.FCVolumeSource, fldPath *field.Path) field.ErrorList {
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
			allErrs = append(allErrs, field.Invalid(fldPath.Child("lun"), fc.Lun, validation.InclusiveRangeError(0, 255)))
		}
	}
	return allErrs
}

func validateSecretVolumeSource(s *corev1.SecretVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := requiredStrings(fldPath, "secretName", s.SecretName)
	allErrs = append(allErrs, validateFileMode(s.DefaultMode, fldPath.Child("defaultMode"))...)
	for i := range s.Items {
		allErrs = append(allErrs, validateKeyToPath(&s.Items[i], fldPath.Child("items").Index(i))...)
	}
	return allErrs
}

func validateConfigMapVolumeSource(s *corev1.ConfigMapVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := requiredStrings(fldPath, "name", s.Name)
	allErrs = append(allErrs, validateFileMode(s.DefaultMode, fldPath.Child("defaultMode"))...)
	for i := range s.Items {
		allErrs = append(allErrs, validateKeyToPath(&s.Items[i], fldPath.Child("items").Index(i))...)
	}
	return allErrs
}

func validateKeyToPath(kp *corev1.KeyToPath, fldPath *field.Path) field.ErrorList {
	allErrs := requiredStrings(fldPath, "key", kp.Key, "path", kp.Path)
	allErrs = append(allErrs, ValidateLocalNonReservedPath(kp.Path, fldPath.Child("path"))...)
	return append(allErrs, validateFileMode(kp.Mode, fldPath.Child("mode"))...)
}

func validateNFSVolumeSource(nfs *corev1.NFSVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := requiredStrings(fldPath, "server", nfs.Server, "path", nfs.Path)
	if !path.IsAbs(nfs.Path) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("path"), nfs.Path, "must be an absolute path"))
	}
	return allErrs
}

func validateQuobyteVolumeSource(q *corev1.QuobyteVolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	const hostPorts = "must be a host:port pair or multiple pairs separated by commas"
	switch {
	case q.Registry == "":
		allErrs = append(allErrs, field.Required(fldPath.Child("registry"), hostPorts))
	case len(q.Tenant) >= 65:
		allErrs = append(allErrs, field.Required(fldPath.Child("tenant"), "must be a UUID and may not exceed a length of 64 characters"))
	default:
		for _, hp := range strings.Split(q.Registry, ",") {
			if _, _, err := net.SplitHostPort(hp); err != nil {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("registry"), q.Registry, hostPorts))
			}
		}
	}
	return append(allErrs, requiredStrings(fldPath, "volume", q.Volume)...)
}

func validateFlockerVolumeSource(f *corev1.FlockerVolumeSource, fldPath *field.Path) field.ErrorList {
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

func validateFlexVolumeSource(fv *corev1.FlexVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := requiredStrings(fldPath, "driver", fv.Driver)
	for k := range fv.Options {
		ns := k
		if parts := strings.SplitN(k, "/", 2); len(parts) == 2 {
			ns = parts[0]
		}
		normalized := "." + strings.ToLower(ns)
		if strings.HasSuffix(normalized, ".kubernetes.io") || strings.HasSuffix(normalized, ".k8s.io") {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("options").Key(k), k, "kubernetes.io and k8s.io namespaces are reserved"))
		}
	}
	return allErrs
}

func validateAzureDisk(a *corev1.AzureDiskVolumeSource, fldPath *field.Path) field.ErrorList {
	cachingModes := []corev1.AzureDataDiskCachingMode{corev1.AzureDataDiskCachingNone, corev1.AzureDataDiskCachingReadOnly, corev1.AzureDataDiskCachingReadWrite}
	kinds := []corev1.AzureDataDiskKind{corev1.AzureDedicatedBlobDisk, corev1.AzureManagedDisk, corev1.AzureSharedBlobDisk}
	allErrs := requiredStrings(fldPath, "diskName", a.DiskName, "diskURI", a.DataDiskURI)
	if a.CachingMode != nil && !contains(cachingModes, *a.CachingMode) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("cachingMode"), *a.CachingMode, cachingModes))
	}
	if a.Kind != nil && !contains(kinds, *a.Kind) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("kind"), *a.Kind, kinds))
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

func validateStorageOSVolumeSource(s *corev1.StorageOSVolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if s.VolumeName == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("volumeName"), ""))
	} else {
		allErrs = append(allErrs, ValidateDNS1123Label(s.VolumeName, fldPath.Child("volumeName"))...)
	}
	if s.VolumeNamespace != "" {
		allErrs = append(allErrs, ValidateDNS1123Label(s.VolumeNamespace, fldPath.Child("volumeNamespace"))...)
	}
	if s.SecretRef != nil && s.SecretRef.Name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("secretRef", "name"), ""))
	}
	return allErrs
}

// validateCSIDriverName: required (and then nothing else, as upstream's
// ValidateCSIDriverName), at most 63 characters, a DNS subdomain once
// lower-cased.
func validateCSIDriverName(driver string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if driver == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	if len(driver) > 63 {
		allErrs = append(allErrs, field.TooLong(fldPath, "", 63))
	}
	for _, msg := range validation.IsDNS1123Subdomain(strings.ToLower(driver)) {
		allErrs = append(allErrs, field.Invalid(fldPath, driver, msg))
	}
	return allErrs
}

func validateCSIVolumeSource(csi *corev1.CSIVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := validateCSIDriverName(csi.Driver, fldPath.Child("driver"))
	if ref := csi.NodePublishSecretRef; ref != nil {
		if ref.Name == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("nodePublishSecretRef", "name"), ""))
		} else {
			allErrs = append(allErrs, nameErrors(validateSecretName, ref.Name, fldPath.Child("name"))...)
		}
	}
	return allErrs
}

var validVolumeDownwardAPIFieldPaths = []string{"metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"}

func validateDownwardAPIVolumeFile(file *corev1.DownwardAPIVolumeFile, fldPath *field.Path) field.ErrorList {
	allErrs := requiredStrings(fldPath, "path", file.Path)
	allErrs = append(allErrs, ValidateLocalNonReservedPath(file.Path, fldPath.Child("path"))...)
	switch {
	case file.FieldRef != nil:
		allErrs = append(allErrs, validateObjectFieldSelector(file.FieldRef, validVolumeDownwardAPIFieldPaths, fldPath.Child("fieldRef"))...)
		if file.ResourceFieldRef != nil {
			allErrs = append(allErrs, field.Invalid(fldPath, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
		}
	case file.ResourceFieldRef != nil:
		allErrs = append(allErrs, validateContainerResourceFieldSelector(file.ResourceFieldRef, fldPath.Child("resourceFieldRef"), true)...)
	default:
		allErrs = append(allErrs, field.Required(fldPath, "one of fieldRef and resourceFieldRef is required"))
	}
	return append(allErrs, validateFileMode(file.Mode, fldPath.Child("mode"))...)
}

func validateDownwardAPIVolumeSource(d *corev1.DownwardAPIVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := validateFileMode(d.DefaultMode, fldPath.Child("defaultMode"))
	for i := range d.Items {
		// Upstream reports the items' errors at the source's path.
		allErrs = append(allErrs, validateDownwardAPIVolumeFile(&d.Items[i], fldPath)...)
	}
	return allErrs
}

func validateProjectedVolumeSource(pr *corev1.ProjectedVolumeSource, fldPath *field.Path, opts PodValidationOptions) field.ErrorList {
	allErrs := validateFileMode(pr.DefaultMode, fldPath.Child("defaultMode"))
	allPaths := map[string]bool{}
	addPath := func(p string, value any) {
		if allPaths[p] {
			allErrs = append(allErrs, field.Invalid(fldPath, value, "conflicting duplicate paths"))
		}
		allPaths[p] = true
	}
	for i, src := range pr.Sources {
		n := 0
		srcPath := fldPath.Child("sources").Index(i)
		if s := src.Secret; s != nil {
			n++
			pp := srcPath.Child("secret")
			allErrs = append(allErrs, requiredStrings(pp, "name", s.Name)...)
			for j := range s.Items {
				allErrs = append(allErrs, validateKeyToPath(&s.Items[j], pp.Child("items").Index(j))...)
				if s.Items[j].Path != "" {
					addPath(s.Items[j].Path, s.Name)
				}
			}
		}
		if c := src.ConfigMap; c != nil {
			n++
			pp := srcPath.Child("configMap")
			allErrs = append(allErrs, requiredStrings(pp, "name", c.Name)...)
			for j := range c.Items {
				allErrs = append(allErrs, validateKeyToPath(&c.Items[j], pp.Child("items").Index(j))...)
				if c.Items[j].Path != "" {
					addPath(c.Items[j].Path, c.Name)
				}
			}
		}
		if d := src.DownwardAPI; d != nil {
			n++
			for j := range d.Items {
				allErrs = append(allErrs, validateDownwardAPIVolumeFile(&d.Items[j], srcPath.Child("downwardAPI"))...)
				if d.Items[j].Path != "" {
					addPath(d.Items[j].Path, d.Items[j].Path)
				}
			}
		}
		if t := src.ServiceAccountToken; t != nil {
			n++
			pp := srcPath.Child("serviceAccountToken")
			if exp := ptrValue(t.ExpirationSeconds); exp < 10*60 {
				allErrs = append(allErrs, field.Invalid(pp.Child("expirationSeconds"), exp, "may not specify a duration less than 10 minutes"))
			} else if exp > 1<<32 {
				allErrs = append(allErrs, field.Invalid(pp.Child("expirationSeconds"), exp, "may not specify a duration larger than 2^32 seconds"))
			}
			if t.Path == "" {
				allErrs = append(allErrs, field.Required(fldPath.Child("path"), ""))
			} else if !opts.AllowNonLocalProjectedTokenPath {
				allErrs = append(allErrs, ValidateLocalNonReservedPath(t.Path, fldPath.Child("path"))...)
			}
		}
		if b := src.ClusterTrustBundle; b != nil {
			n++
			allErrs = append(allErrs, validateClusterTrustBundleProjection(b, srcPath.Child("clusterTrustBundle"))...)
			addPath(b.Path, b.Path)
		}
		if pc := src.PodCertificate; pc != nil {
			n++
		}
		if n > 1 {
			allErrs = append(allErrs, field.Forbidden(srcPath, "may not specify more than 1 volume type per source"))
		}
	}
	return allErrs
}

func validateClusterTrustBundleProjection(b *corev1.ClusterTrustBundleProjection, pp *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case b.Name != nil && b.SignerName != nil:
		allErrs = append(allErrs, field.Invalid(pp, b, "only one of name and signerName may be used"))
	case b.Name != nil:
		if *b.Name == "" {
			allErrs = append(allErrs, field.Required(pp.Child("name"), "must be a valid object name"))
		}
		for _, msg := range validateClassName(*b.Name, false) {
			allErrs = append(allErrs, field.Invalid(pp.Child("name"), *b.Name, fmt.Sprintf("not a valid clustertrustbundlename: %v", msg)))
		}
		if b.LabelSelector != nil {
			allErrs = append(allErrs, field.Invalid(pp.Child("labelSelector"), b.LabelSelector, "labelSelector must be unset if name is specified"))
		}
	case b.SignerName != nil:
		if *b.SignerName == "" {
			allErrs = append(allErrs, field.Required(pp.Child("signerName"), "must be a valid signer name"))
		}
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(b.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, pp.Child("labelSelector"))...)
	default:
		allErrs = append(allErrs, field.Required(pp, "either name or signerName must be specified"))
	}
	if b.Path == "" {
		allErrs = append(allErrs, field.Required(pp.Child("path"), ""))
	}
	return append(allErrs, ValidateLocalNonReservedPath(b.Path, pp.Child("path"))...)
}

// validateEphemeralVolumeSource checks the claim template of an ephemeral
// volume: metadata limited to labels and annotations, and the claim
// spec's basics (access modes, a positive storage request, volume mode).
func validateEphemeralVolumeSource(e *corev1.EphemeralVolumeSource, fldPath *field.Path) field.ErrorList {
	t := e.VolumeClaimTemplate
	if t == nil {
		return field.ErrorList{field.Required(fldPath.Child("volumeClaimTemplate"), "")}
	}
	tp := fldPath.Child("volumeClaimTemplate")
	allErrs := ValidateTemplateObjectMeta(&t.ObjectMeta, tp.Child("metadata"))
	return append(allErrs, validateClaimSpec(&t.Spec, tp.Child("spec"))...)
}

// ValidateTemplateObjectMeta checks embedded object metadata that may only
// hold labels and annotations.
func ValidateTemplateObjectMeta(m *metav1.ObjectMeta, fldPath *field.Path) field.ErrorList {
	allErrs := validateAnnotations(m.Annotations, fldPath.Child("annotations"))
	allErrs = append(allErrs, metav1validation.ValidateLabels(m.Labels, fldPath.Child("labels"))...)
	return append(allErrs, validateFieldAllowList(*m, map[string]bool{"Annotations": true, "Labels": true}, "cannot be set", fldPath)...)
}

var supportedAccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOnce, corev1.ReadWriteOncePod}

// validateClaimSpec is the part of upstream's
// ValidatePersistentVolumeClaimSpec an ephemeral volume's template needs.
func validateClaimSpec(spec *corev1.PersistentVolumeClaimSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(spec.AccessModes) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("accessModes"), "at least 1 access mode is required"))
	}
	if spec.Selector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("selector"))...)
	}
	rwop, other := false, false
	for _, m := range spec.AccessModes {
		if !contains(supportedAccessModes, m) {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("accessModes"), m, supportedAccessModes))
		}
		if m == corev1.ReadWriteOncePod {
			rwop = true
		} else if contains(supportedAccessModes, m) {
			other = true
		}
	}
	if rwop && other {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("accessModes"), "may not use ReadWriteOncePod with other access modes"))
	}
	storagePath := fldPath.Child("resources").Key(string(corev1.ResourceStorage))
	if q, ok := spec.Resources.Requests[corev1.ResourceStorage]; !ok {
		allErrs = append(allErrs, field.Required(storagePath, ""))
	} else if errs := ValidatePositiveQuantityValue(q, storagePath); len(errs) > 0 {
		allErrs = append(allErrs, errs...)
	} else {
		allErrs = append(allErrs, ValidateResourceQuantityValue(corev1.ResourceStorage, q, storagePath)...)
	}
	if spec.StorageClassName != nil && *spec.StorageClassName != "" {
		allErrs = append(allErrs, nameErrors(validateClassName, *spec.StorageClassName, fldPath.Child("storageClassName"))...)
	}
	modes := []corev1.PersistentVolumeMode{corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem}
	if spec.VolumeMode != nil && !contains(modes, *spec.VolumeMode) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("volumeMode"), *spec.VolumeMode, modes))
	}
	return allErrs
}

func contains[T comparable](list []T, v T) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func ptrValue[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
