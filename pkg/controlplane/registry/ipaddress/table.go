package ipaddress

import (
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// TableConvertor renders IP addresses as upstream's printers
// (printIPAddress): NAME PARENTREF, the parent as
// "<resource>[.<group>]/[<namespace>/]<name>" (no Age column upstream).
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "ParentRef", Type: "string", Description: networkingv1.IPAddressSpec{}.SwaggerDoc()["parentRef"]},
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		ip, ok := obj.(*networkingv1.IPAddress)
		if !ok {
			return nil, false
		}
		parent := "<none>"
		if r := ip.Spec.ParentRef; r != nil {
			parent = strings.ToLower(schema.GroupResource{Group: r.Group, Resource: r.Resource}.String())
			if r.Namespace != "" {
				parent += "/" + r.Namespace
			}
			parent += "/" + r.Name
		}
		return []any{ip.Name, parent}, true
	},
}
