package servicecidr

import (
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// TableConvertor renders service CIDRs as upstream's printers
// (printServiceCIDR): NAME CIDRS AGE.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "CIDRs", Type: "string", Description: networkingv1.ServiceCIDRSpec{}.SwaggerDoc()["cidrs"]},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		sc, ok := obj.(*networkingv1.ServiceCIDR)
		if !ok {
			return nil, false
		}
		return []any{sc.Name, strings.Join(sc.Spec.CIDRs, ","), table.Since(sc.CreationTimestamp)}, true
	},
}
