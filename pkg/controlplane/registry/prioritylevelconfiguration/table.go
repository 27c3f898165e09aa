package prioritylevelconfiguration

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// TableConvertor renders priority levels as upstream's printers
// (pkg/printers/internalversion/printers.go
// priorityLevelConfigurationColumnDefinitions): NAME TYPE
// NOMINALCONCURRENCYSHARES QUEUES HANDSIZE QUEUELENGTHLIMIT AGE; "<none>"
// where the level has no such setting (exempt, or Reject).
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Type", Type: "string", Description: flowcontrolv1.PriorityLevelConfigurationSpec{}.SwaggerDoc()["type"]},
		{Name: "NominalConcurrencyShares", Type: "string", Description: flowcontrolv1.LimitedPriorityLevelConfiguration{}.SwaggerDoc()["nominalConcurrencyShares"]},
		{Name: "Queues", Type: "string", Description: flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queues"]},
		{Name: "HandSize", Type: "string", Description: flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["handSize"]},
		{Name: "QueueLengthLimit", Type: "string", Description: flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queueLengthLimit"]},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		pl, ok := obj.(*flowcontrolv1.PriorityLevelConfiguration)
		if !ok {
			return nil, false
		}
		var shares, queues, handSize, queueLengthLimit any = "<none>", "<none>", "<none>", "<none>"
		if l := pl.Spec.Limited; l != nil {
			if l.NominalConcurrencyShares != nil {
				shares = int64(*l.NominalConcurrencyShares)
			}
			if q := l.LimitResponse.Queuing; q != nil {
				queues, handSize, queueLengthLimit = int64(q.Queues), int64(q.HandSize), int64(q.QueueLengthLimit)
			}
		}
		return []any{pl.Name, string(pl.Spec.Type), shares, queues, handSize, queueLengthLimit, table.Since(pl.CreationTimestamp)}, true
	},
}
