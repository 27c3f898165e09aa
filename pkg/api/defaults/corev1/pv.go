package corev1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// SetDefaults_PersistentVolume defaults a volume's phase to Pending, its
// reclaim policy to Retain and its volume mode to Filesystem.
func SetDefaults_PersistentVolume(obj *corev1.PersistentVolume) {
	if obj.Status.Phase == "" {
		obj.Status.Phase = corev1.VolumePending
	}
	if obj.Spec.PersistentVolumeReclaimPolicy == "" {
		obj.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	}
	if obj.Spec.VolumeMode == nil {
		obj.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
	}
}

// SetDefaults_PersistentVolumeClaim defaults a claim's phase to Pending.
func SetDefaults_PersistentVolumeClaim(obj *corev1.PersistentVolumeClaim) {
	if obj.Status.Phase == "" {
		obj.Status.Phase = corev1.ClaimPending
	}
}

// SetDefaults_RBDPersistentVolumeSource defaults pool "rbd", user "admin"
// and keyring "/etc/ceph/keyring" (+default markers upstream).
func SetDefaults_RBDPersistentVolumeSource(obj *corev1.RBDPersistentVolumeSource) {
	if obj.RBDPool == "" {
		obj.RBDPool = "rbd"
	}
	if obj.RadosUser == "" {
		obj.RadosUser = "admin"
	}
	if obj.Keyring == "" {
		obj.Keyring = "/etc/ceph/keyring"
	}
}

// SetDefaults_ISCSIPersistentVolumeSource defaults the interface to
// "default".
func SetDefaults_ISCSIPersistentVolumeSource(obj *corev1.ISCSIPersistentVolumeSource) {
	if obj.ISCSIInterface == "" {
		obj.ISCSIInterface = "default"
	}
}

// SetDefaults_ScaleIOPersistentVolumeSource defaults storage mode
// ThinProvisioned and fsType xfs (+default markers upstream).
func SetDefaults_ScaleIOPersistentVolumeSource(obj *corev1.ScaleIOPersistentVolumeSource) {
	if obj.StorageMode == "" {
		obj.StorageMode = "ThinProvisioned"
	}
	if obj.FSType == "" {
		obj.FSType = "xfs"
	}
}

// SetObjectDefaults_PersistentVolume applies every default of a
// PersistentVolume: its own, the rounding of its capacity, then its
// source's.
func SetObjectDefaults_PersistentVolume(in *corev1.PersistentVolume) {
	SetDefaults_PersistentVolume(in)
	SetDefaults_ResourceList(&in.Spec.Capacity)
	s := &in.Spec.PersistentVolumeSource
	if s.HostPath != nil {
		SetDefaults_HostPathVolumeSource(s.HostPath)
	}
	if s.RBD != nil {
		SetDefaults_RBDPersistentVolumeSource(s.RBD)
	}
	if s.ISCSI != nil {
		SetDefaults_ISCSIPersistentVolumeSource(s.ISCSI)
	}
	if s.AzureDisk != nil {
		SetDefaults_AzureDiskVolumeSource(s.AzureDisk)
	}
	if s.ScaleIO != nil {
		SetDefaults_ScaleIOPersistentVolumeSource(s.ScaleIO)
	}
}

// SetObjectDefaults_PersistentVolumeList defaults each volume of a list.
func SetObjectDefaults_PersistentVolumeList(in *corev1.PersistentVolumeList) {
	for i := range in.Items {
		SetObjectDefaults_PersistentVolume(&in.Items[i])
	}
}

// SetObjectDefaults_PersistentVolumeClaim applies every default of a
// PersistentVolumeClaim: its phase, its spec's volume mode, and the
// rounding of its requested, allocated and actual resources.
func SetObjectDefaults_PersistentVolumeClaim(in *corev1.PersistentVolumeClaim) {
	SetDefaults_PersistentVolumeClaim(in)
	SetDefaults_PersistentVolumeClaimSpec(&in.Spec)
	SetDefaults_ResourceList(&in.Spec.Resources.Limits)
	SetDefaults_ResourceList(&in.Spec.Resources.Requests)
	SetDefaults_ResourceList(&in.Status.Capacity)
	SetDefaults_ResourceList(&in.Status.AllocatedResources)
}

// SetObjectDefaults_PersistentVolumeClaimList defaults each claim of a
// list.
func SetObjectDefaults_PersistentVolumeClaimList(in *corev1.PersistentVolumeClaimList) {
	for i := range in.Items {
		SetObjectDefaults_PersistentVolumeClaim(&in.Items[i])
	}
}
