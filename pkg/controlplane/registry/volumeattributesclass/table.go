package volumeattributesclass

import (
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// TableConvertor renders volume attributes classes as upstream's printers
// (printVolumeAttributesClass): NAME DRIVERNAME AGE.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "DriverName", Type: "string", Description: storagev1.VolumeAttributesClass{}.SwaggerDoc()["driverName"]},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		c, ok := obj.(*storagev1.VolumeAttributesClass)
		if !ok {
			return nil, false
		}
		return []any{c.Name, c.DriverName, table.Since(c.CreationTimestamp)}, true
	},
}
