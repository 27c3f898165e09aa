package replicaset

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/workload"
	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// TableConvertor renders replicasets as upstream's printReplicaSet
// (v1.37): NAME DESIRED CURRENT READY AGE, and CONTAINERS IMAGES SELECTOR
// with -o wide (descriptions from apps/v1's docs, as upstream's
// replicaSetColumnDefinitions).
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Desired", Type: "integer", Description: appsv1.ReplicaSetSpec{}.SwaggerDoc()["replicas"]},
		{Name: "Current", Type: "integer", Description: appsv1.ReplicaSetStatus{}.SwaggerDoc()["replicas"]},
		{Name: "Ready", Type: "integer", Description: appsv1.ReplicaSetStatus{}.SwaggerDoc()["readyReplicas"]},
		table.AgeColumn,
		workload.ContainersColumn,
		workload.ImagesColumn,
		{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.ReplicaSetSpec{}.SwaggerDoc()["selector"]},
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		rs, ok := obj.(*appsv1.ReplicaSet)
		if !ok {
			return nil, false
		}
		var desired int32
		if rs.Spec.Replicas != nil {
			desired = *rs.Spec.Replicas
		}
		names, images := workload.ContainerCells(rs.Spec.Template.Spec.Containers)
		return []any{
			rs.Name, int64(desired), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas),
			table.Since(rs.CreationTimestamp),
			names, images, metav1.FormatLabelSelector(rs.Spec.Selector),
		}, true
	},
}
