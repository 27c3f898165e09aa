// Package autoscalingv2 holds kube-apiserver's defaulting of autoscaling/v2
// HorizontalPodAutoscalers (upstream's pkg/apis/autoscaling/v2/defaults.go),
// applied whenever one is decoded: minReplicas 1, a CPU target of 80%
// utilization when no metric is given, and, when a behavior is given, its
// unset scale-up and scale-down rules filled with upstream's defaults.
package autoscalingv2

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// DefaultCPUUtilization is the CPU target of an autoscaler without
// metrics, in percent.
const DefaultCPUUtilization = 80

// RegisterDefaults registers the defaulters of HorizontalPodAutoscaler and
// its list on s.
func RegisterDefaults(s *runtime.Scheme) error {
	s.AddTypeDefaultingFunc(&autoscalingv2.HorizontalPodAutoscaler{}, func(obj any) {
		SetObjectDefaults_HorizontalPodAutoscaler(obj.(*autoscalingv2.HorizontalPodAutoscaler))
	})
	s.AddTypeDefaultingFunc(&autoscalingv2.HorizontalPodAutoscalerList{}, func(obj any) {
		SetObjectDefaults_HorizontalPodAutoscalerList(obj.(*autoscalingv2.HorizontalPodAutoscalerList))
	})
	return nil
}

// defaultScaleUpRules are the scale-up rules of upstream's controller:
// no stabilization, the larger of 4 pods or 100% per 15 seconds.
func defaultScaleUpRules() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: ptr.To[int32](0),
		SelectPolicy:               ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	}
}

// defaultScaleDownRules: 100% per 15 seconds; the stabilization window
// stays unset (the controller's --horizontal-pod-autoscaler-downscale-
// stabilization flag applies then).
func defaultScaleDownRules() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{
		SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	}
}

// SetDefaults_HorizontalPodAutoscaler defaults minReplicas, the metrics and
// the behavior.
func SetDefaults_HorizontalPodAutoscaler(obj *autoscalingv2.HorizontalPodAutoscaler) {
	if obj.Spec.MinReplicas == nil {
		obj.Spec.MinReplicas = ptr.To[int32](1)
	}
	if len(obj.Spec.Metrics) == 0 {
		obj.Spec.Metrics = []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{
					Type:               autoscalingv2.UtilizationMetricType,
					AverageUtilization: ptr.To[int32](DefaultCPUUtilization),
				},
			},
		}}
	}
	SetDefaults_HorizontalPodAutoscalerBehavior(obj)
}

// SetDefaults_HorizontalPodAutoscalerBehavior fills, when a behavior is
// set, each unset field of its scale-up and scale-down rules (a missing
// rule set entirely) with the defaults.
func SetDefaults_HorizontalPodAutoscalerBehavior(obj *autoscalingv2.HorizontalPodAutoscaler) {
	b := obj.Spec.Behavior
	if b == nil {
		return
	}
	b.ScaleUp = mergeRules(b.ScaleUp, defaultScaleUpRules())
	b.ScaleDown = mergeRules(b.ScaleDown, defaultScaleDownRules())
}

// mergeRules returns defaults with the fields set in from.
func mergeRules(from, defaults *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if from == nil {
		return defaults
	}
	if from.SelectPolicy != nil {
		defaults.SelectPolicy = from.SelectPolicy
	}
	if from.StabilizationWindowSeconds != nil {
		defaults.StabilizationWindowSeconds = from.StabilizationWindowSeconds
	}
	if from.Policies != nil {
		defaults.Policies = from.Policies
	}
	if from.Tolerance != nil {
		defaults.Tolerance = from.Tolerance
	}
	return defaults
}

// SetObjectDefaults_HorizontalPodAutoscaler applies every default of an
// autoscaler.
func SetObjectDefaults_HorizontalPodAutoscaler(in *autoscalingv2.HorizontalPodAutoscaler) {
	SetDefaults_HorizontalPodAutoscaler(in)
}

// SetObjectDefaults_HorizontalPodAutoscalerList defaults each autoscaler of
// a list.
func SetObjectDefaults_HorizontalPodAutoscalerList(in *autoscalingv2.HorizontalPodAutoscalerList) {
	for i := range in.Items {
		SetObjectDefaults_HorizontalPodAutoscaler(&in.Items[i])
	}
}
