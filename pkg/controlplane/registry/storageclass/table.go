package storageclass

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// Annotations marking the default StorageClass (the beta one is still
// honoured, as upstream's IsDefaultAnnotation does).
const (
	IsDefaultStorageClassAnnotation     = "storageclass.kubernetes.io/is-default-class"
	BetaIsDefaultStorageClassAnnotation = "storageclass.beta.kubernetes.io/is-default-class"
)

// IsDefault reports whether sc is marked as a default class.
func IsDefault(sc *storagev1.StorageClass) bool {
	return sc.Annotations[IsDefaultStorageClassAnnotation] == "true" || sc.Annotations[BetaIsDefaultStorageClassAnnotation] == "true"
}

// TableConvertor renders storage classes as upstream's printers
// (printStorageClass): NAME PROVISIONER RECLAIMPOLICY VOLUMEBINDINGMODE
// ALLOWVOLUMEEXPANSION AGE, the default class's name followed by
// " (default)".
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Provisioner", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["provisioner"]},
		{Name: "ReclaimPolicy", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["reclaimPolicy"]},
		{Name: "VolumeBindingMode", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["volumeBindingMode"]},
		{Name: "AllowVolumeExpansion", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["allowVolumeExpansion"]},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		sc, ok := obj.(*storagev1.StorageClass)
		if !ok {
			return nil, false
		}
		name := sc.Name
		if IsDefault(sc) {
			name += " (default)"
		}
		reclaim := string(corev1.PersistentVolumeReclaimDelete)
		if sc.ReclaimPolicy != nil {
			reclaim = string(*sc.ReclaimPolicy)
		}
		binding := string(storagev1.VolumeBindingImmediate)
		if sc.VolumeBindingMode != nil {
			binding = string(*sc.VolumeBindingMode)
		}
		expansion := false
		if sc.AllowVolumeExpansion != nil {
			expansion = *sc.AllowVolumeExpansion
		}
		return []any{name, sc.Provisioner, reclaim, binding, expansion, table.Since(sc.CreationTimestamp)}, true
	},
}
