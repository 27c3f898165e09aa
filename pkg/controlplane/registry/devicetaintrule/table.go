package devicetaintrule

import (
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

var taintDocs = resourcev1.DeviceTaint{}.SwaggerDoc()

// TableConvertor renders rules as kube-apiserver v1.37.2 does
// (printDeviceTaint, pkg/printers/internalversion/printers.go at
// k8s.io/kubernetes v1.37.2; the columns were observed on that binary):
// NAME KEY VALUE EFFECT TIMEADDED AGE, the selectors left out. TIMEADDED is
// the age of spec.taint.timeAdded, empty when unset.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Key", Type: "string", Description: taintDocs["key"]},
		{Name: "Value", Type: "string", Description: taintDocs["value"]},
		{Name: "Effect", Type: "string", Description: taintDocs["effect"]},
		{Name: "TimeAdded", Type: "string", Description: taintDocs["timeAdded"]},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		r, ok := obj.(*resourcev1.DeviceTaintRule)
		if !ok {
			return nil, false
		}
		added := ""
		if r.Spec.Taint.TimeAdded != nil {
			added = table.Since(*r.Spec.Taint.TimeAdded)
		}
		return []any{r.Name, r.Spec.Taint.Key, r.Spec.Taint.Value, string(r.Spec.Taint.Effect), added, table.Since(r.CreationTimestamp)}, true
	},
}
