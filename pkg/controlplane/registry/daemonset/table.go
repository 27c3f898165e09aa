package daemonset

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/workload"
	"github.com/kapi-dev/kapi/pkg/registry/table"
)

var statusDoc = appsv1.DaemonSetStatus{}.SwaggerDoc()

// TableConvertor renders daemonsets as upstream's printDaemonSet (v1.37):
// NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE, and
// CONTAINERS IMAGES SELECTOR with -o wide (descriptions from apps/v1's
// docs, as upstream's daemonSetColumnDefinitions).
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Desired", Type: "integer", Description: statusDoc["desiredNumberScheduled"]},
		{Name: "Current", Type: "integer", Description: statusDoc["currentNumberScheduled"]},
		{Name: "Ready", Type: "integer", Description: statusDoc["numberReady"]},
		{Name: "Up-to-date", Type: "integer", Description: statusDoc["updatedNumberScheduled"]},
		{Name: "Available", Type: "integer", Description: statusDoc["numberAvailable"]},
		{Name: "Node Selector", Type: "string", Description: corev1.PodSpec{}.SwaggerDoc()["nodeSelector"]},
		table.AgeColumn,
		workload.ContainersColumn,
		workload.ImagesColumn,
		{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.DaemonSetSpec{}.SwaggerDoc()["selector"]},
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		ds, ok := obj.(*appsv1.DaemonSet)
		if !ok {
			return nil, false
		}
		s := ds.Status
		names, images := workload.ContainerCells(ds.Spec.Template.Spec.Containers)
		return []any{
			ds.Name,
			int64(s.DesiredNumberScheduled), int64(s.CurrentNumberScheduled), int64(s.NumberReady),
			int64(s.UpdatedNumberScheduled), int64(s.NumberAvailable),
			labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector),
			table.Since(ds.CreationTimestamp),
			names, images, metav1.FormatLabelSelector(ds.Spec.Selector),
		}, true
	},
}
