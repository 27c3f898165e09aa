package deployment

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/workload"
	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// TableConvertor renders deployments as upstream's printDeployment (v1.37):
// NAME READY UP-TO-DATE AVAILABLE AGE, and CONTAINERS IMAGES SELECTOR with
// -o wide. The column descriptions are upstream's (apps/v1's docs, as
// its deploymentColumnDefinitions).
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
		{Name: "Up-to-date", Type: "string", Description: appsv1.DeploymentStatus{}.SwaggerDoc()["updatedReplicas"]},
		{Name: "Available", Type: "string", Description: appsv1.DeploymentStatus{}.SwaggerDoc()["availableReplicas"]},
		table.AgeColumn,
		workload.ContainersColumn,
		workload.ImagesColumn,
		{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.DeploymentSpec{}.SwaggerDoc()["selector"]},
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		d, ok := obj.(*appsv1.Deployment)
		if !ok {
			return nil, false
		}
		var desired int32
		if d.Spec.Replicas != nil {
			desired = *d.Spec.Replicas
		}
		names, images := workload.ContainerCells(d.Spec.Template.Spec.Containers)
		return []any{
			d.Name,
			fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, desired),
			int64(d.Status.UpdatedReplicas),
			int64(d.Status.AvailableReplicas),
			table.Since(d.CreationTimestamp),
			names, images,
			workload.SelectorString(d.Spec.Selector),
		}, true
	},
}
