package runtimeclass

import (
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// TableConvertor renders runtime classes as upstream's printers
// (printRuntimeClass): NAME HANDLER AGE.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		// Upstream takes the description from ObjectMeta's docs, which have
		// no "handler": it is empty.
		{Name: "Handler", Type: "string", Description: ""},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		rc, ok := obj.(*nodev1.RuntimeClass)
		if !ok {
			return nil, false
		}
		return []any{rc.Name, rc.Handler, table.Since(rc.CreationTimestamp)}, true
	},
}
