package storagev1

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	defaultscorev1 "github.com/kapi-dev/kapi/pkg/api/defaults/corev1"
)

// RegisterDefaults registers the covering defaulters of StorageClass,
// CSIDriver and VolumeAttachment and their lists on s (CSINode,
// CSIStorageCapacity and VolumeAttributesClass have no defaults).
func RegisterDefaults(s *runtime.Scheme) error {
	s.AddTypeDefaultingFunc(&storagev1.StorageClass{}, func(obj any) { SetDefaults_StorageClass(obj.(*storagev1.StorageClass)) })
	s.AddTypeDefaultingFunc(&storagev1.StorageClassList{}, func(obj any) {
		l := obj.(*storagev1.StorageClassList)
		for i := range l.Items {
			SetDefaults_StorageClass(&l.Items[i])
		}
	})
	s.AddTypeDefaultingFunc(&storagev1.CSIDriver{}, func(obj any) { SetDefaults_CSIDriver(obj.(*storagev1.CSIDriver)) })
	s.AddTypeDefaultingFunc(&storagev1.CSIDriverList{}, func(obj any) {
		l := obj.(*storagev1.CSIDriverList)
		for i := range l.Items {
			SetDefaults_CSIDriver(&l.Items[i])
		}
	})
	s.AddTypeDefaultingFunc(&storagev1.VolumeAttachment{}, func(obj any) {
		SetObjectDefaults_VolumeAttachment(obj.(*storagev1.VolumeAttachment))
	})
	s.AddTypeDefaultingFunc(&storagev1.VolumeAttachmentList{}, func(obj any) {
		l := obj.(*storagev1.VolumeAttachmentList)
		for i := range l.Items {
			SetObjectDefaults_VolumeAttachment(&l.Items[i])
		}
	})
	return nil
}

// SetDefaults_StorageClass defaults reclaimPolicy to Delete and
// volumeBindingMode to Immediate.
func SetDefaults_StorageClass(obj *storagev1.StorageClass) {
	if obj.ReclaimPolicy == nil {
		obj.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimDelete)
	}
	if obj.VolumeBindingMode == nil {
		obj.VolumeBindingMode = ptr.To(storagev1.VolumeBindingImmediate)
	}
}

// SetDefaults_CSIDriver defaults attachRequired true; podInfoOnMount,
// storageCapacity, requiresRepublish and seLinuxMount false (the
// SELinuxMountReadWriteOncePod gate is on by default in v1.37);
// fsGroupPolicy ReadWriteOnceWithFSType; volumeLifecycleModes
// [Persistent].
func SetDefaults_CSIDriver(obj *storagev1.CSIDriver) {
	spec := &obj.Spec
	if spec.AttachRequired == nil {
		spec.AttachRequired = ptr.To(true)
	}
	if spec.PodInfoOnMount == nil {
		spec.PodInfoOnMount = ptr.To(false)
	}
	if spec.StorageCapacity == nil {
		spec.StorageCapacity = ptr.To(false)
	}
	if spec.FSGroupPolicy == nil {
		spec.FSGroupPolicy = ptr.To(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy)
	}
	if len(spec.VolumeLifecycleModes) == 0 {
		spec.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}
	}
	if spec.RequiresRepublish == nil {
		spec.RequiresRepublish = ptr.To(false)
	}
	if spec.SELinuxMount == nil {
		spec.SELinuxMount = ptr.To(false)
	}
	// Upstream defaults it under VolumeLimitScaling, beta and on by
	// default in v1.37 (kubernetes v1.37 pkg/apis/storage/v1/defaults.go,
	// pkg/features/kube_features.go).
	if spec.PreventPodSchedulingIfMissing == nil {
		spec.PreventPodSchedulingIfMissing = ptr.To(false)
	}
}

// SetObjectDefaults_VolumeAttachment defaults an inline volume spec as a
// PersistentVolume's spec: reclaim policy Retain, volume mode Filesystem
// (upstream's SetDefaults_PersistentVolumeSpec), capacity rounding and
// the sources' defaults.
func SetObjectDefaults_VolumeAttachment(in *storagev1.VolumeAttachment) {
	spec := in.Spec.Source.InlineVolumeSpec
	if spec == nil {
		return
	}
	pv := &corev1.PersistentVolume{Spec: *spec}
	defaultscorev1.SetObjectDefaults_PersistentVolume(pv)
	*spec = pv.Spec
}
