package mutatingwebhookconfiguration

import (
	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// TableConvertor renders configurations as kubectl shows them: NAME
// WEBHOOKS AGE (upstream's printers.go
// mutatingWebhookColumnDefinitions).
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Webhooks", Type: "integer", Description: "Webhooks indicates the number of webhooks registered in this configuration"},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		c, ok := obj.(*arv1.MutatingWebhookConfiguration)
		if !ok {
			return nil, false
		}
		return []any{c.Name, int64(len(c.Webhooks)), table.Since(c.CreationTimestamp)}, true
	},
}
