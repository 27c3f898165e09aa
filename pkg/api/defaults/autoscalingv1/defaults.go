// Package autoscalingv1 holds kube-apiserver's defaulting of autoscaling/v1
// HorizontalPodAutoscalers (upstream's pkg/apis/autoscaling/v1/defaults.go):
// minReplicas 1. The CPU target an autoscaler without metrics gets is not
// a default of v1 but of its conversion to v2 (package
// pkg/api/conversion/autoscaling), as upstream.
package autoscalingv1

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// RegisterDefaults registers the defaulters of HorizontalPodAutoscaler and
// its list on s.
func RegisterDefaults(s *runtime.Scheme) error {
	s.AddTypeDefaultingFunc(&autoscalingv1.HorizontalPodAutoscaler{}, func(obj any) {
		SetObjectDefaults_HorizontalPodAutoscaler(obj.(*autoscalingv1.HorizontalPodAutoscaler))
	})
	s.AddTypeDefaultingFunc(&autoscalingv1.HorizontalPodAutoscalerList{}, func(obj any) {
		SetObjectDefaults_HorizontalPodAutoscalerList(obj.(*autoscalingv1.HorizontalPodAutoscalerList))
	})
	return nil
}

// SetDefaults_HorizontalPodAutoscaler defaults minReplicas to 1.
func SetDefaults_HorizontalPodAutoscaler(obj *autoscalingv1.HorizontalPodAutoscaler) {
	if obj.Spec.MinReplicas == nil {
		obj.Spec.MinReplicas = ptr.To[int32](1)
	}
}

// SetObjectDefaults_HorizontalPodAutoscaler applies every default of an
// autoscaler.
func SetObjectDefaults_HorizontalPodAutoscaler(in *autoscalingv1.HorizontalPodAutoscaler) {
	SetDefaults_HorizontalPodAutoscaler(in)
}

// SetObjectDefaults_HorizontalPodAutoscalerList defaults each autoscaler of
// a list.
func SetObjectDefaults_HorizontalPodAutoscalerList(in *autoscalingv1.HorizontalPodAutoscalerList) {
	for i := range in.Items {
		SetObjectDefaults_HorizontalPodAutoscaler(&in.Items[i])
	}
}
