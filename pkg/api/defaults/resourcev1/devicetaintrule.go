package resourcev1

import (
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// RegisterDeviceTaintRuleDefaults registers the defaulting of
// DeviceTaintRules and their lists on s (upstream's generated
// SetObjectDefaults_DeviceTaintRule: the taint's timeAdded).
func RegisterDeviceTaintRuleDefaults(s *runtime.Scheme) error {
	s.AddTypeDefaultingFunc(&resourcev1.DeviceTaintRule{}, func(obj any) {
		SetObjectDefaults_DeviceTaintRule(obj.(*resourcev1.DeviceTaintRule))
	})
	s.AddTypeDefaultingFunc(&resourcev1.DeviceTaintRuleList{}, func(obj any) {
		l := obj.(*resourcev1.DeviceTaintRuleList)
		for i := range l.Items {
			SetObjectDefaults_DeviceTaintRule(&l.Items[i])
		}
	})
	return nil
}

// SetObjectDefaults_DeviceTaintRule defaults a rule's taint.
func SetObjectDefaults_DeviceTaintRule(r *resourcev1.DeviceTaintRule) {
	SetDefaults_DeviceTaint(&r.Spec.Taint)
}
