package mutatingadmissionpolicy

import (
	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// TableConvertor: NAME MUTATIONS PARAMKIND AGE (upstream's printers.go
// mutatingAdmissionPolicy columns and printMutatingAdmissionPolicy).
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Mutations", Type: "integer", Description: "Mutation indicates the number of mutations rules defined in this configuration"},
		{Name: "ParamKind", Type: "string", Description: "ParamKind specifies the kind of resources used to parameterize this policy"},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		p, ok := obj.(*arv1.MutatingAdmissionPolicy)
		if !ok {
			return nil, false
		}
		paramKind := "<unset>"
		if pk := p.Spec.ParamKind; pk != nil {
			paramKind = pk.APIVersion + "/" + pk.Kind
		}
		return []any{p.Name, int64(len(p.Spec.Mutations)), paramKind, table.Since(p.CreationTimestamp)}, true
	},
}
