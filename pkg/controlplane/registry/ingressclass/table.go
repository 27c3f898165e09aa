package ingressclass

import (
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// TableConvertor renders ingress classes as upstream's printers
// (printIngressClass): NAME CONTROLLER PARAMETERS AGE.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Controller", Type: "string", Description: "Controller that is responsible for handling this class"},
		{Name: "Parameters", Type: "string", Description: "A reference to a resource with additional parameters"},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		ic, ok := obj.(*networkingv1.IngressClass)
		if !ok {
			return nil, false
		}
		params := "<none>"
		if p := ic.Spec.Parameters; p != nil {
			params = p.Kind
			if p.APIGroup != nil {
				params += "." + *p.APIGroup
			}
			params += "/" + p.Name
		}
		return []any{ic.Name, ic.Spec.Controller, params, table.Since(ic.CreationTimestamp)}, true
	},
}
