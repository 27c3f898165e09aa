package csistoragecapacity

import (
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// TableConvertor renders CSI storage capacities as upstream's printers
// (printCSIStorageCapacity): NAME STORAGECLASSNAME CAPACITY (no Age
// column upstream).
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "StorageClassName", Type: "string", Description: storagev1.CSIStorageCapacity{}.SwaggerDoc()["storageClassName"]},
		{Name: "Capacity", Type: "string", Description: storagev1.CSIStorageCapacity{}.SwaggerDoc()["capacity"]},
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		c, ok := obj.(*storagev1.CSIStorageCapacity)
		if !ok {
			return nil, false
		}
		capacity := "<unset>"
		if c.Capacity != nil {
			capacity = c.Capacity.String()
		}
		return []any{c.Name, c.StorageClassName, capacity}, true
	},
}
