package schedulingv1

import (
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// RegisterDefaults registers the defaulters of PriorityClass and its list
// on s.
func RegisterDefaults(s *runtime.Scheme) error {
	s.AddTypeDefaultingFunc(&schedulingv1.PriorityClass{}, func(obj any) { SetDefaults_PriorityClass(obj.(*schedulingv1.PriorityClass)) })
	s.AddTypeDefaultingFunc(&schedulingv1.PriorityClassList{}, func(obj any) {
		l := obj.(*schedulingv1.PriorityClassList)
		for i := range l.Items {
			SetDefaults_PriorityClass(&l.Items[i])
		}
	})
	return nil
}

// SetDefaults_PriorityClass defaults preemptionPolicy to
// PreemptLowerPriority.
func SetDefaults_PriorityClass(obj *schedulingv1.PriorityClass) {
	if obj.PreemptionPolicy == nil {
		obj.PreemptionPolicy = ptr.To(corev1.PreemptLowerPriority)
	}
}
