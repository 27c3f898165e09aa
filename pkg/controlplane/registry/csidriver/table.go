package csidriver

import (
	"strings"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

var specDoc = storagev1.CSIDriverSpec{}.SwaggerDoc()

// TableConvertor renders CSI drivers as upstream's printers
// (printCSIDriver): NAME ATTACHREQUIRED PODINFOONMOUNT STORAGECAPACITY
// TOKENREQUESTS REQUIRESREPUBLISH MODES AGE.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "AttachRequired", Type: "boolean", Description: specDoc["attachRequired"]},
		{Name: "PodInfoOnMount", Type: "boolean", Description: specDoc["podInfoOnMount"]},
		{Name: "StorageCapacity", Type: "boolean", Description: specDoc["storageCapacity"]},
		{Name: "TokenRequests", Type: "string", Description: specDoc["tokenRequests"]},
		{Name: "RequiresRepublish", Type: "boolean", Description: specDoc["requiresRepublish"]},
		{Name: "Modes", Type: "string", Description: specDoc["volumeLifecycleModes"]},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		d, ok := obj.(*storagev1.CSIDriver)
		if !ok {
			return nil, false
		}
		orFalse := func(b *bool) bool { return b != nil && *b }
		attach := d.Spec.AttachRequired == nil || *d.Spec.AttachRequired
		modes := make([]string, 0, len(d.Spec.VolumeLifecycleModes))
		for _, m := range d.Spec.VolumeLifecycleModes {
			modes = append(modes, string(m))
		}
		modesCell := strings.Join(modes, ",")
		if modesCell == "" {
			modesCell = "<none>"
		}
		tokens := "<unset>"
		if len(d.Spec.TokenRequests) > 0 {
			audiences := make([]string, 0, len(d.Spec.TokenRequests))
			for _, t := range d.Spec.TokenRequests {
				audiences = append(audiences, t.Audience)
			}
			tokens = strings.Join(audiences, ",")
		}
		return []any{d.Name, attach, orFalse(d.Spec.PodInfoOnMount), orFalse(d.Spec.StorageCapacity), tokens,
			orFalse(d.Spec.RequiresRepublish), modesCell, table.Since(d.CreationTimestamp)}, true
	},
}
