package poddisruptionbudget

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// TableConvertor renders budgets as kubectl shows them: NAME MIN AVAILABLE
// MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Min Available", Type: "string", Description: "The minimum number of pods that must be available."},
		{Name: "Max Unavailable", Type: "string", Description: "The maximum number of pods that may be unavailable."},
		{Name: "Allowed Disruptions", Type: "integer", Description: "Calculated number of pods that may be disrupted at this time."},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		pdb, ok := obj.(*policyv1.PodDisruptionBudget)
		if !ok {
			return nil, false
		}
		minAvailable, maxUnavailable := "N/A", "N/A"
		if pdb.Spec.MinAvailable != nil {
			minAvailable = pdb.Spec.MinAvailable.String()
		}
		if pdb.Spec.MaxUnavailable != nil {
			maxUnavailable = pdb.Spec.MaxUnavailable.String()
		}
		return []any{pdb.Name, minAvailable, maxUnavailable, int64(pdb.Status.DisruptionsAllowed), table.Since(pdb.CreationTimestamp)}, true
	},
}
