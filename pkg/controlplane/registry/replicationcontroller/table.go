package replicationcontroller

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

var (
	specDoc   = corev1.ReplicationControllerSpec{}.SwaggerDoc()
	statusDoc = corev1.ReplicationControllerStatus{}.SwaggerDoc()
)

// TableConvertor renders controllers as upstream's
// printReplicationController (kubernetes
// pkg/printers/internalversion/printers.go): NAME DESIRED CURRENT READY
// AGE, and CONTAINERS IMAGES SELECTOR with -o wide.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Desired", Type: "integer", Description: specDoc["replicas"]},
		{Name: "Current", Type: "integer", Description: statusDoc["replicas"]},
		{Name: "Ready", Type: "integer", Description: statusDoc["readyReplicas"]},
		table.AgeColumn,
		{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."},
		{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."},
		{Name: "Selector", Type: "string", Priority: 1, Description: specDoc["selector"]},
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		rc, ok := obj.(*corev1.ReplicationController)
		if !ok {
			return nil, false
		}
		desired := int64(0)
		if rc.Spec.Replicas != nil {
			desired = int64(*rc.Spec.Replicas)
		}
		var names, images []string
		if rc.Spec.Template != nil {
			for _, c := range rc.Spec.Template.Spec.Containers {
				names = append(names, c.Name)
				images = append(images, c.Image)
			}
		}
		return []any{rc.Name, desired, int64(rc.Status.Replicas), int64(rc.Status.ReadyReplicas), table.Since(rc.CreationTimestamp),
			strings.Join(names, ","), strings.Join(images, ","), labels.FormatLabels(rc.Spec.Selector)}, true
	},
}
