package namespace

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// TableConvertor renders namespaces as kubectl shows them: NAME STATUS AGE.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Status", Type: "string", Description: "The status of the namespace"},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		ns, ok := obj.(*corev1.Namespace)
		if !ok {
			return nil, false
		}
		return []any{ns.Name, string(ns.Status.Phase), table.Since(ns.CreationTimestamp)}, true
	},
}
