package horizontalpodautoscaler

import (
	"fmt"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	conversion "github.com/kapi-dev/kapi/pkg/api/conversion/autoscaling"
	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// Column descriptions: the autoscaling/v2 types' (upstream's printer took
// them from autoscaling/v2beta1, which k8s.io/api v0.37 no longer has).
var (
	specDoc   = autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()
	statusDoc = autoscalingv2.HorizontalPodAutoscalerStatus{}.SwaggerDoc()
)

// TableConvertor renders autoscalers (v2, or v1 converted to v2) as
// kubectl shows them: NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Reference", Type: "string", Description: specDoc["scaleTargetRef"]},
		{Name: "Targets", Type: "string", Description: specDoc["metrics"]},
		{Name: "MinPods", Type: "string", Description: specDoc["minReplicas"]},
		{Name: "MaxPods", Type: "string", Description: specDoc["maxReplicas"]},
		{Name: "Replicas", Type: "string", Description: statusDoc["currentReplicas"]},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		var hpa *autoscalingv2.HorizontalPodAutoscaler
		switch o := obj.(type) {
		case *autoscalingv2.HorizontalPodAutoscaler:
			hpa = o
		case *autoscalingv1.HorizontalPodAutoscaler:
			v2, err := conversion.FromV1(o)
			if err != nil {
				return nil, false
			}
			hpa = v2
		default:
			return nil, false
		}
		minPods := "<unset>"
		if hpa.Spec.MinReplicas != nil {
			minPods = fmt.Sprintf("%d", *hpa.Spec.MinReplicas)
		}
		ref := hpa.Spec.ScaleTargetRef.Kind + "/" + hpa.Spec.ScaleTargetRef.Name
		return []any{hpa.Name, ref, formatMetrics(hpa.Spec.Metrics, hpa.Status.CurrentMetrics), minPods,
			int64(hpa.Spec.MaxReplicas), int64(hpa.Status.CurrentReplicas), table.Since(hpa.CreationTimestamp)}, true
	},
}

// formatMetrics is upstream's TARGETS cell: "<current>/<target>" for the
// first two metrics, "+ N more..." past them, "<none>" without metrics.
func formatMetrics(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return "<none>"
	}
	const shown = 2
	list := make([]string, 0, len(specs))
	for i, spec := range specs {
		var status *autoscalingv2.MetricStatus
		if i < len(statuses) {
			status = &statuses[i]
		}
		list = append(list, formatMetric(spec, status))
	}
	if len(list) > shown {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:shown], ", "), len(list)-shown)
	}
	return strings.Join(list, ", ")
}

func formatMetric(spec autoscalingv2.MetricSpec, status *autoscalingv2.MetricStatus) string {
	const unknown = "<unknown>"
	switch spec.Type {
	case autoscalingv2.ExternalMetricSourceType:
		if spec.External == nil {
			break
		}
		current := unknown
		if spec.External.Target.AverageValue != nil {
			if status != nil && status.External != nil && status.External.Current.AverageValue != nil {
				current = status.External.Current.AverageValue.String()
			}
			return fmt.Sprintf("%s/%s (avg)", current, spec.External.Target.AverageValue.String())
		}
		if status != nil && status.External != nil {
			current = quantityString(status.External.Current.Value)
		}
		return fmt.Sprintf("%s/%s", current, quantityString(spec.External.Target.Value))
	case autoscalingv2.PodsMetricSourceType:
		if spec.Pods == nil {
			break
		}
		current := unknown
		if status != nil && status.Pods != nil {
			current = quantityString(status.Pods.Current.AverageValue)
		}
		return fmt.Sprintf("%s/%s", current, quantityString(spec.Pods.Target.AverageValue))
	case autoscalingv2.ObjectMetricSourceType:
		if spec.Object == nil {
			break
		}
		current := unknown
		if spec.Object.Target.AverageValue != nil {
			if status != nil && status.Object != nil && status.Object.Current.AverageValue != nil {
				current = status.Object.Current.AverageValue.String()
			}
			return fmt.Sprintf("%s/%s (avg)", current, spec.Object.Target.AverageValue.String())
		}
		if status != nil && status.Object != nil {
			current = quantityString(status.Object.Current.Value)
		}
		return fmt.Sprintf("%s/%s", current, quantityString(spec.Object.Target.Value))
	case autoscalingv2.ResourceMetricSourceType:
		if spec.Resource == nil {
			break
		}
		var cur *autoscalingv2.MetricValueStatus
		if status != nil && status.Resource != nil {
			cur = &status.Resource.Current
		}
		return string(spec.Resource.Name) + ": " + formatResourceTarget(spec.Resource.Target, cur)
	case autoscalingv2.ContainerResourceMetricSourceType:
		if spec.ContainerResource == nil {
			break
		}
		var cur *autoscalingv2.MetricValueStatus
		if status != nil && status.ContainerResource != nil {
			cur = &status.ContainerResource.Current
		}
		return string(spec.ContainerResource.Name) + ": " + formatResourceTarget(spec.ContainerResource.Target, cur)
	}
	return "<unknown type>"
}

// formatResourceTarget is "<current>/<target>" of a (container) resource
// metric: raw values, or utilizations in percent ("<auto>" without one).
func formatResourceTarget(target autoscalingv2.MetricTarget, current *autoscalingv2.MetricValueStatus) string {
	if target.AverageValue != nil {
		cur := "<unknown>"
		if current != nil {
			cur = quantityString(current.AverageValue)
		}
		return fmt.Sprintf("%s/%s", cur, target.AverageValue.String())
	}
	cur := "<unknown>"
	if current != nil && current.AverageUtilization != nil {
		cur = fmt.Sprintf("%d%%", *current.AverageUtilization)
	}
	want := "<auto>"
	if target.AverageUtilization != nil {
		want = fmt.Sprintf("%d%%", *target.AverageUtilization)
	}
	return fmt.Sprintf("%s/%s", cur, want)
}

// quantityString is a quantity as upstream's printer shows it ("<nil>"
// for none).
func quantityString(q *resource.Quantity) string { return q.String() }
