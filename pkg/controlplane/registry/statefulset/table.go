package statefulset

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/workload"
	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// TableConvertor renders statefulsets as upstream's printStatefulSet
// (v1.37): NAME READY AGE, and CONTAINERS IMAGES with -o wide.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
		table.AgeColumn,
		workload.ContainersColumn,
		workload.ImagesColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		ss, ok := obj.(*appsv1.StatefulSet)
		if !ok {
			return nil, false
		}
		var desired int32
		if ss.Spec.Replicas != nil {
			desired = *ss.Spec.Replicas
		}
		names, images := workload.ContainerCells(ss.Spec.Template.Spec.Containers)
		return []any{ss.Name, fmt.Sprintf("%d/%d", ss.Status.ReadyReplicas, desired), table.Since(ss.CreationTimestamp), names, images}, true
	},
}
