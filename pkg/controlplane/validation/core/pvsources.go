package core

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The volume sources of persistent volumes and their node affinity, as
// upstream's ValidatePersistentVolumeSpec checks them (kubernetes
// pkg/apis/core/validation, v1.37). Upstream's field paths are kept,
// including its slips ("persistentDisk" for gcePersistentDisk errors,
// "cephFS" then "cephfs").

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
		{s.HostPath != nil, "hostPath", func() field.ErrorList { return validateHostPathVolumeSource(s.HostPath, p("hostPath")) }},
		{s.GCEPersistentDisk != nil, "gcePersistentDisk", func() field.ErrorList {
			return validatePD(s.GCEPersistentDisk.PDName, "pdName", s.GCEPersistentDisk.Partition, p("persistentDisk"))
		}},
		{s.AWSElasticBlockStore != nil, "awsElasticBlockStore", func() field.ErrorList {
			return validatePD(s.AWSElasticBlockStore.VolumeID, "volumeID", s.AWSElasticBlockStore.Partition, p("awsElasticBlockStore"))
		}},
		{s.Glusterfs != nil, "glusterfs", func() field.ErrorList { return pvGlusterfsErrors(s.Glusterfs, p("glusterfs")) }},
		{s.Flocker != nil, "flocker", func() field.ErrorList { return validateFlockerVolumeSource(s.Flocker, p("flocker")) }},
		{s.NFS != nil, "nfs", func() field.ErrorList { return validateNFSVolumeSource(s.NFS, p("nfs")) }},
		{s.RBD != nil, "rbd", func() field.ErrorList {
			errs := requiredStrings(p("rbd"), "image", s.RBD.RBDImage)
			if len(s.RBD.CephMonitors) == 0 {
				errs = append(field.ErrorList{field.Required(p("rbd").Child("monitors"), "")}, errs...)
			}
			return errs
		}},
		{s.Quobyte != nil, "quobyte", func() field.ErrorList { return validateQuobyteVolumeSource(s.Quobyte, p("quobyte")) }},
		{s.CephFS != nil, "cephFS", func() field.ErrorList {
			if len(s.CephFS.Monitors) == 0 {
				return field.ErrorList{field.Required(p("cephfs").Child("monitors"), "")}
			}
			return nil
		}},
		{s.ISCSI != nil, "iscsi", func() field.ErrorList { return pvISCSIErrors(s.ISCSI, pvName, p("iscsi")) }},
		{s.Cinder != nil, "cinder", func() field.ErrorList {
			errs := requiredStrings(p("cinder"), "volumeID", s.Cinder.VolumeID)
			if ref := s.Cinder.SecretRef; ref != nil {
				errs = append(errs, requiredStrings(p("cinder").Child("secretRef"), "name", ref.Name, "namespace", ref.Namespace)...)
			}
			return errs
		}},
		{s.FC != nil, "fc", func() field.ErrorList { return validateFCVolumeSource(s.FC, p("fc")) }},
		{s.FlexVolume != nil, "flexVolume", func() field.ErrorList { return pvFlexErrors(s.FlexVolume, p("flexVolume")) }},
		{s.AzureFile != nil, "azureFile", func() field.ErrorList {
			errs := requiredStrings(p("azureFile"), "secretName", s.AzureFile.SecretName, "shareName", s.AzureFile.ShareName)
			if ns := s.AzureFile.SecretNamespace; ns != nil && *ns == "" {
				errs = append(errs, field.Required(p("azureFile").Child("secretNamespace"), ""))
			}
			return errs
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
		{s.ScaleIO != nil, "scaleIO", func() field.ErrorList {
			return requiredStrings(p("scaleIO"), "gateway", s.ScaleIO.Gateway, "system", s.ScaleIO.System, "volumeName", s.ScaleIO.VolumeName)
		}},
		{s.Local != nil, "local", func() field.ErrorList {
			var errs field.ErrorList
			if s.Local.Path == "" {
				errs = append(errs, field.Required(p("local").Child("path"), ""))
			} else {
				errs = append(errs, validatePathNoBacksteps(s.Local.Path, p("local").Child("path"))...)
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
			allErrs = append(allErrs, field.Forbidden(p(src.name), moreThanOneVolumeType))
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

func pvGlusterfsErrors(g *corev1.GlusterfsPersistentVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := requiredStrings(fldPath, "endpoints", g.EndpointsName, "path", g.Path)
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

// iqnErrors checks an iSCSI qualified name (or EUI, or NAA name) at
// fldPath.
func iqnErrors(name string, fldPath *field.Path) field.ErrorList {
	switch {
	case !strings.HasPrefix(name, "iqn") && !strings.HasPrefix(name, "eui") && !strings.HasPrefix(name, "naa"),
		strings.HasPrefix(name, "iqn") && !iscsiInitiatorIqnRegex().MatchString(name),
		strings.HasPrefix(name, "eui") && !iscsiInitiatorEuiRegex().MatchString(name),
		strings.HasPrefix(name, "naa") && !iscsiInitiatorNaaRegex().MatchString(name):
		return field.ErrorList{field.Invalid(fldPath, name, "must be valid format")}
	}
	return nil
}

func pvISCSIErrors(iscsi *corev1.ISCSIPersistentVolumeSource, pvName string, fldPath *field.Path) field.ErrorList {
	allErrs := requiredStrings(fldPath, "targetPortal", iscsi.TargetPortal)
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
		allErrs = append(allErrs, field.Invalid(fldPath.Child("lun"), iscsi.Lun, validation.InclusiveRangeError(0, 255)))
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

func pvFlexErrors(fv *corev1.FlexPersistentVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := requiredStrings(fldPath, "driver", fv.Driver)
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

func pvStorageOSErrors(s *corev1.StorageOSPersistentVolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if s.VolumeName == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("volumeName"), ""))
	} else {
		allErrs = append(allErrs, ValidateDNS1123Label(s.VolumeName, fldPath.Child("volumeName"))...)
	}
	if s.VolumeNamespace != "" {
		allErrs = append(allErrs, ValidateDNS1123Label(s.VolumeNamespace, fldPath.Child("volumeNamespace"))...)
	}
	if ref := s.SecretRef; ref != nil {
		allErrs = append(allErrs, requiredStrings(fldPath.Child("secretRef"), "name", ref.Name, "namespace", ref.Namespace)...)
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
		allErrs = append(allErrs, ValidateDNS1123Label(ref.Namespace, fldPath.Child("namespace"))...)
	}
	return allErrs
}

func pvCSIErrors(csi *corev1.CSIPersistentVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := validateCSIDriverName(csi.Driver, fldPath.Child("driver"))
	allErrs = append(allErrs, requiredStrings(fldPath, "volumeHandle", csi.VolumeHandle)...)
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
