package flowschema

import (
	"cmp"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// TableConvertor renders FlowSchemas as upstream's printers
// (pkg/printers/internalversion/printers.go flowSchemaColumnDefinitions):
// NAME PRIORITYLEVEL MATCHINGPRECEDENCE DISTINGUISHERMETHOD AGE MISSINGPL.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "PriorityLevel", Type: "string", Description: flowcontrolv1.PriorityLevelConfigurationReference{}.SwaggerDoc()["name"]},
		{Name: "MatchingPrecedence", Type: "string", Description: flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["matchingPrecedence"]},
		{Name: "DistinguisherMethod", Type: "string", Description: flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["distinguisherMethod"]},
		table.AgeColumn,
		{Name: "MissingPL", Type: "string", Description: "references a broken or non-existent PriorityLevelConfiguration"},
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		fs, ok := obj.(*flowcontrolv1.FlowSchema)
		if !ok {
			return nil, false
		}
		distinguisher := "<none>"
		if fs.Spec.DistinguisherMethod != nil {
			distinguisher = string(fs.Spec.DistinguisherMethod.Type)
		}
		missing := "?"
		for _, c := range fs.Status.Conditions {
			if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
				missing = string(c.Status)
				break
			}
		}
		return []any{fs.Name, fs.Spec.PriorityLevelConfiguration.Name, int64(fs.Spec.MatchingPrecedence), distinguisher, table.Since(fs.CreationTimestamp), missing}, true
	},
	// A list's rows in the order requests are matched against them:
	// matching precedence, then name (upstream's printFlowSchemaList
	// sorts by FlowSchemaSequence, pkg/apis/flowcontrol/util/helpers.go).
	Order: func(a, b runtime.Object) int {
		fa, oka := a.(*flowcontrolv1.FlowSchema)
		fb, okb := b.(*flowcontrolv1.FlowSchema)
		if !oka || !okb {
			return 0
		}
		if c := cmp.Compare(fa.Spec.MatchingPrecedence, fb.Spec.MatchingPrecedence); c != 0 {
			return c
		}
		return cmp.Compare(fa.Name, fb.Name)
	},
}
