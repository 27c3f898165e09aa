package csinode

import (
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// TableConvertor renders CSI nodes as upstream's printers (printCSINode):
// NAME DRIVERS AGE.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Drivers", Type: "integer", Description: "Drivers indicates the number of CSI drivers registered on the node"},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		n, ok := obj.(*storagev1.CSINode)
		if !ok {
			return nil, false
		}
		return []any{n.Name, int64(len(n.Spec.Drivers)), table.Since(n.CreationTimestamp)}, true
	},
}
