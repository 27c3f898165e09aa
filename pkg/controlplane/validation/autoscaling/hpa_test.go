package autoscaling

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// Expected errors are upstream's (kubernetes/kubernetes v1.37
// pkg/apis/autoscaling/validation/validation.go, and for minReplicas and
// maxReplicas the beta declarative rules that replace its errors,
// pkg/apis/autoscaling/v2/zz_generated.validations.go), "<type> <field>: <detail>".

func errStrings(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, fmt.Sprintf("%s %s: %s", string(e.Type), e.Field, e.Detail))
	}
	return out
}

func validHPA() *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", ResourceVersion: "1"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](1),
			MaxReplicas:    5,
			Metrics: []autoscalingv2.MetricSpec{{
				Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](80)}},
			}},
		},
	}
}

func TestValidateHorizontalPodAutoscaler(t *testing.T) {
	if errs := ValidateHorizontalPodAutoscaler(validHPA(), OptionsFor(validHPA(), nil)); len(errs) != 0 {
		t.Fatalf("valid autoscaler: %v", errs)
	}
	q := resource.MustParse
	tests := []struct {
		name   string
		mutate func(*autoscalingv2.HorizontalPodAutoscaler)
		want   []string
	}{
		{"maxReplicas 0", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MaxReplicas = 0 }, []string{
			"FieldValueRequired spec.maxReplicas: ",
			"FieldValueInvalid spec.maxReplicas: must be greater than or equal to `minReplicas`",
		}},
		{"maxReplicas and minReplicas negative", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.MinReplicas = ptr.To[int32](-1)
			h.Spec.MaxReplicas = -3
		}, []string{
			"FieldValueInvalid spec.minReplicas: must be greater than or equal to 0",
			"FieldValueInvalid spec.maxReplicas: must be greater than or equal to 1",
			"FieldValueInvalid spec.maxReplicas: must be greater than or equal to `minReplicas`",
		}},
		{"minReplicas 0 (HPAScaleToZero is on) without Object or External metrics", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas = ptr.To[int32](0) }, []string{
			"FieldValueForbidden spec.metrics: must specify at least one Object or External metric to support scaling to zero replicas",
		}},
		{"maxReplicas below minReplicas", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas = ptr.To[int32](7) },
			[]string{"FieldValueInvalid spec.maxReplicas: must be greater than or equal to `minReplicas`"}},
		{"scaleTargetRef without kind and name", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1"}
		}, []string{"FieldValueRequired spec.scaleTargetRef.kind: ", "FieldValueRequired spec.scaleTargetRef.name: "}},
		{"scaleTargetRef name with a slash", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.ScaleTargetRef.Name = "a/b" },
			[]string{`FieldValueInvalid spec.scaleTargetRef.name: may not contain '/'`}},
		{"scaleTargetRef apiVersion without group", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.ScaleTargetRef.APIVersion = "v1" },
			[]string{"FieldValueInvalid spec.scaleTargetRef.apiVersion: apiVersion must specify API group"}},
		{"metric type unsupported", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.Metrics[0].Type = "Cpu" }, []string{
			`FieldValueNotSupported spec.metrics[0].type: supported values: "ContainerResource", "External", "Object", "Pods", "Resource"`,
			`FieldValueNotSupported spec.metrics[0].type: supported values: "ContainerResource", "External", "Object", "Pods", "Resource"`,
		}},
		{"resource metric without target", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Resource.Target = autoscalingv2.MetricTarget{}
		}, []string{
			"FieldValueRequired spec.metrics[0].resource.target.type: must specify a metric target type",
			"FieldValueInvalid spec.metrics[0].resource.target.type: must be either Utilization, Value, or AverageValue",
			"FieldValueRequired spec.metrics[0].resource.target.averageUtilization: must set either a target raw value or a target utilization",
		}},
		{"utilization and value both set, utilization 0", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Resource.Target.AverageUtilization = ptr.To[int32](0)
			h.Spec.Metrics[0].Resource.Target.AverageValue = ptr.To(q("100m"))
		}, []string{
			"FieldValueInvalid spec.metrics[0].resource.target.averageUtilization: must be greater than 0",
			"FieldValueForbidden spec.metrics[0].resource.target.averageValue: may not set both a target raw value and a target utilization",
		}},
		{"type Pods with a resource source", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Type = autoscalingv2.PodsMetricSourceType
		}, []string{
			"FieldValueRequired spec.metrics[0].pods: must populate information for the given metric source",
		}},
		{"two sources", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Pods = &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "rps"},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(q("1"))}}
		}, []string{"FieldValueForbidden spec.metrics[0].pods: must populate the given metric source only"}},
		{"pods metric without averageValue", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0] = autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: "rps"},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType},
			}}
		}, []string{"FieldValueRequired spec.metrics[0].pods.target.averageValue: must specify a positive target averageValue"}},
		{"external metric with both targets and negative value", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0] = autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: ""},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(q("-1")), AverageValue: ptr.To(q("1"))},
			}}
		}, []string{
			"FieldValueRequired spec.metrics[0].external.metric.name: must specify a metric name",
			"FieldValueInvalid spec.metrics[0].external.target.value: must be positive",
			"FieldValueForbidden spec.metrics[0].external.target.value: may not set both a target value for metric and a per-pod target",
		}},
		{"behavior", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](3601), SelectPolicy: ptr.To[autoscalingv2.ScalingPolicySelect]("Avg")},
				ScaleDown: &autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{
					{Type: "Nodes", Value: 0, PeriodSeconds: 1801},
				}, Tolerance: ptr.To(q("-0.1"))},
			}
		}, []string{
			"FieldValueInvalid spec.behavior.scaleUp.stabilizationWindowSeconds: must be less than or equal to 3600",
			`FieldValueNotSupported spec.behavior.scaleUp.selectPolicy: supported values: "Disabled", "Max", "Min"`,
			"FieldValueRequired spec.behavior.scaleUp.policies: must specify at least one Policy",
			"FieldValueInvalid spec.behavior.scaleDown.tolerance: must be greater than or equal to zero",
			`FieldValueNotSupported spec.behavior.scaleDown.policies[0].type: supported values: "Percent", "Pods"`,
			"FieldValueInvalid spec.behavior.scaleDown.policies[0].value: must be greater than zero",
			"FieldValueInvalid spec.behavior.scaleDown.policies[0].periodSeconds: must be less than or equal to 1800",
		}},
		{"container resource metric", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0] = autoscalingv2.MetricSpec{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
				Name: "gpu", Container: "App",
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)},
			}}
		}, []string{
			"FieldValueInvalid spec.metrics[0].containerResource.name: must be a standard resource for containers",
			"FieldValueInvalid spec.metrics[0].containerResource.container: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := validHPA()
			tc.mutate(h)
			if diff := cmp.Diff(tc.want, errStrings(ValidateHorizontalPodAutoscaler(h, OptionsFor(h, nil)))); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOptionsFor(t *testing.T) {
	// A ReplicationController target may have a core-group apiVersion.
	rc := validHPA()
	rc.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "v1", Kind: "ReplicationController", Name: "rc"}
	if errs := ValidateHorizontalPodAutoscaler(rc, OptionsFor(rc, nil)); len(errs) != 0 {
		t.Errorf("ReplicationController target: %v", errs)
	}
	// An update that keeps an invalid stored target is accepted; one that
	// changes it is checked.
	old := validHPA()
	old.Spec.ScaleTargetRef.APIVersion = "v1"
	kept := old.DeepCopy()
	kept.Spec.MaxReplicas = 9
	if errs := ValidateHorizontalPodAutoscalerFields(kept, OptionsFor(kept, old)); len(errs) != 0 {
		t.Errorf("update keeping the stored target: %v", errs)
	}
	// A stored minReplicas of 0 stays allowed.
	zero := validHPA()
	zero.Spec.MinReplicas = ptr.To[int32](0)
	zero.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "queue"},
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("5"))},
	}}}
	again := zero.DeepCopy()
	if errs := ValidateHorizontalPodAutoscalerFields(again, OptionsFor(again, zero)); len(errs) != 0 {
		t.Errorf("update of a stored minReplicas 0: %v", errs)
	}
}
