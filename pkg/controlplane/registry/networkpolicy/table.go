package networkpolicy

import (
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// TableConvertor renders network policies as upstream's printers
// (printNetworkPolicy): NAME POD-SELECTOR AGE.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Pod-Selector", Type: "string", Description: networkingv1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"]},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		np, ok := obj.(*networkingv1.NetworkPolicy)
		if !ok {
			return nil, false
		}
		return []any{np.Name, metav1.FormatLabelSelector(&np.Spec.PodSelector), table.Since(np.CreationTimestamp)}, true
	},
}
