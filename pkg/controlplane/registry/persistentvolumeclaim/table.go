package persistentvolumeclaim

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/persistentvolume"
	"github.com/kapi-dev/kapi/pkg/registry/table"
)

var (
	specDoc   = corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()
	statusDoc = corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()
)

// TableConvertor renders claims as upstream's printPersistentVolumeClaim
// (kubernetes pkg/printers/internalversion/printers.go): NAME STATUS
// VOLUME CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE, and
// VOLUMEMODE with -o wide. Capacity and access modes are the bound
// volume's (empty while the claim names no volume).
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Status", Type: "string", Description: statusDoc["phase"]},
		{Name: "Volume", Type: "string", Description: specDoc["volumeName"]},
		{Name: "Capacity", Type: "string", Description: statusDoc["capacity"]},
		{Name: "Access Modes", Type: "string", Description: statusDoc["accessModes"]},
		{Name: "StorageClass", Type: "string", Description: "StorageClass of the pvc"},
		{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pvc"},
		table.AgeColumn,
		{Name: "VolumeMode", Type: "string", Priority: 1, Description: specDoc["volumeMode"]},
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		pvc, ok := obj.(*corev1.PersistentVolumeClaim)
		if !ok {
			return nil, false
		}
		phase := string(pvc.Status.Phase)
		if pvc.DeletionTimestamp != nil {
			phase = "Terminating"
		}
		capacity, modes := "", ""
		if pvc.Spec.VolumeName != "" {
			modes = persistentvolume.AccessModes(pvc.Status.AccessModes)
			size := pvc.Status.Capacity[corev1.ResourceStorage]
			capacity = size.String()
		}
		mode := "<unset>"
		if pvc.Spec.VolumeMode != nil {
			mode = string(*pvc.Spec.VolumeMode)
		}
		vac := "<unset>"
		if pvc.Spec.VolumeAttributesClassName != nil {
			vac = *pvc.Spec.VolumeAttributesClassName
		}
		return []any{pvc.Name, phase, pvc.Spec.VolumeName, capacity, modes, storageClass(pvc), vac,
			table.Since(pvc.CreationTimestamp), mode}, true
	},
}

// storageClass is the claim's class: the deprecated beta annotation wins
// over spec.storageClassName, as upstream's GetPersistentVolumeClaimClass.
func storageClass(pvc *corev1.PersistentVolumeClaim) string {
	if c, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return c
	}
	if pvc.Spec.StorageClassName != nil {
		return *pvc.Spec.StorageClassName
	}
	return ""
}
