package persistentvolume

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

var (
	specDoc   = corev1.PersistentVolumeSpec{}.SwaggerDoc()
	statusDoc = corev1.PersistentVolumeStatus{}.SwaggerDoc()
)

// TableConvertor renders volumes as upstream's printPersistentVolume
// (kubernetes pkg/printers/internalversion/printers.go): NAME CAPACITY
// ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS
// VOLUMEATTRIBUTESCLASS REASON AGE, and VOLUMEMODE with -o wide.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Capacity", Type: "string", Description: specDoc["capacity"]},
		{Name: "Access Modes", Type: "string", Description: specDoc["accessModes"]},
		{Name: "Reclaim Policy", Type: "string", Description: specDoc["persistentVolumeReclaimPolicy"]},
		{Name: "Status", Type: "string", Description: statusDoc["phase"]},
		{Name: "Claim", Type: "string", Description: specDoc["claimRef"]},
		{Name: "StorageClass", Type: "string", Description: "StorageClass of the pv"},
		{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pv"},
		{Name: "Reason", Type: "string", Description: statusDoc["reason"]},
		table.AgeColumn,
		{Name: "VolumeMode", Type: "string", Priority: 1, Description: specDoc["volumeMode"]},
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		pv, ok := obj.(*corev1.PersistentVolume)
		if !ok {
			return nil, false
		}
		claim := ""
		if ref := pv.Spec.ClaimRef; ref != nil {
			claim = ref.Namespace + "/" + ref.Name
		}
		size := pv.Spec.Capacity[corev1.ResourceStorage]
		phase := string(pv.Status.Phase)
		if pv.DeletionTimestamp != nil {
			phase = "Terminating"
		}
		mode := "<unset>"
		if pv.Spec.VolumeMode != nil {
			mode = string(*pv.Spec.VolumeMode)
		}
		vac := "<unset>"
		if pv.Spec.VolumeAttributesClassName != nil {
			vac = *pv.Spec.VolumeAttributesClassName
		}
		return []any{pv.Name, size.String(), AccessModes(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy),
			phase, claim, storageClass(pv), vac, pv.Status.Reason, table.Since(pv.CreationTimestamp), mode}, true
	},
}

// storageClass is the volume's class: the deprecated beta annotation
// wins over spec.storageClassName, as upstream's GetPersistentVolumeClass.
func storageClass(pv *corev1.PersistentVolume) string {
	if c, ok := pv.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return c
	}
	return pv.Spec.StorageClassName
}

// AccessModes is kubectl's short form of access modes: RWO, ROX, RWX and
// RWOP, each once, in that order, joined by commas (upstream's
// GetAccessModesAsString).
func AccessModes(modes []corev1.PersistentVolumeAccessMode) string {
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{
		{corev1.ReadWriteOnce, "RWO"},
		{corev1.ReadOnlyMany, "ROX"},
		{corev1.ReadWriteMany, "RWX"},
		{corev1.ReadWriteOncePod, "RWOP"},
	} {
		if slices.Contains(modes, m.mode) {
			out = append(out, m.short)
		}
	}
	return strings.Join(out, ",")
}
