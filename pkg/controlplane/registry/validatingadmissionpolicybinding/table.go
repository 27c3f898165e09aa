package validatingadmissionpolicybinding

import (
	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// TableConvertor: NAME POLICYNAME PARAMREF AGE (upstream's printers.go
// validatingAdmissionPolicyBinding columns).
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "PolicyName", Type: "string", Description: "PolicyName indicates the policy definition which the policy binding binded to"},
		{Name: "ParamRef", Type: "string", Description: "ParamRef indicates the param resource which sets the configuration param"},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		b, ok := obj.(*arv1.ValidatingAdmissionPolicyBinding)
		if !ok {
			return nil, false
		}
		paramRef := "<unset>"
		if r := b.Spec.ParamRef; r != nil {
			switch {
			case r.Name != "" && r.Namespace != "":
				paramRef = r.Namespace + "/" + r.Name
			case r.Name != "":
				paramRef = "*/" + r.Name
			case r.Selector != nil:
				if sel, err := metav1.LabelSelectorAsSelector(r.Selector); err == nil {
					paramRef = sel.String()
				}
			}
		}
		return []any{b.Name, b.Spec.PolicyName, paramRef, table.Since(b.CreationTimestamp)}, true
	},
}
