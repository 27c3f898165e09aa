package controllerrevision

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// TableConvertor renders controllerrevisions as upstream's
// printControllerRevision (v1.37): NAME CONTROLLER REVISION AGE, the
// controller as "<kind>.<group>/<name>" in lower case ("<none>" without
// one).
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Controller", Type: "string", Description: "Controller of the object"},
		{Name: "Revision", Type: "string", Description: appsv1.ControllerRevision{}.SwaggerDoc()["revision"]},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		r, ok := obj.(*appsv1.ControllerRevision)
		if !ok {
			return nil, false
		}
		return []any{r.Name, controllerName(r), r.Revision, table.Since(r.CreationTimestamp)}, true
	},
}

// controllerName is upstream's CONTROLLER cell. An apiVersion that does
// not parse makes upstream's printer fail; kapi shows the bare kind.
func controllerName(r *appsv1.ControllerRevision) string {
	ref := metav1.GetControllerOf(r)
	if ref == nil {
		return "<none>"
	}
	gk := schema.GroupKind{Kind: ref.Kind}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil {
		gk.Group = gv.Group
	}
	if gk.Empty() {
		return ref.Name
	}
	return strings.ToLower(gk.String()) + "/" + ref.Name
}
