package admissionregistrationv1

import (
	arv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// registerMutatingPolicyDefaults registers the defaulters of
// MutatingAdmissionPolicies, their bindings and their lists.
func registerMutatingPolicyDefaults(s *runtime.Scheme) {
	s.AddTypeDefaultingFunc(&arv1.MutatingAdmissionPolicy{}, func(obj any) {
		SetObjectDefaults_MutatingAdmissionPolicy(obj.(*arv1.MutatingAdmissionPolicy))
	})
	s.AddTypeDefaultingFunc(&arv1.MutatingAdmissionPolicyList{}, func(obj any) {
		l := obj.(*arv1.MutatingAdmissionPolicyList)
		for i := range l.Items {
			SetObjectDefaults_MutatingAdmissionPolicy(&l.Items[i])
		}
	})
	s.AddTypeDefaultingFunc(&arv1.MutatingAdmissionPolicyBinding{}, func(obj any) {
		SetObjectDefaults_MutatingAdmissionPolicyBinding(obj.(*arv1.MutatingAdmissionPolicyBinding))
	})
	s.AddTypeDefaultingFunc(&arv1.MutatingAdmissionPolicyBindingList{}, func(obj any) {
		l := obj.(*arv1.MutatingAdmissionPolicyBindingList)
		for i := range l.Items {
			SetObjectDefaults_MutatingAdmissionPolicyBinding(&l.Items[i])
		}
	})
}

// SetObjectDefaults_MutatingAdmissionPolicy: failurePolicy Fail
// (SetDefaults_MutatingAdmissionPolicySpec) and the match constraints'
// defaults (matchPolicy Equivalent, match-all selectors, rule scope "*").
// reinvocationPolicy has no default: it is required, as upstream
// (pkg/apis/admissionregistration/v1/defaults.go and
// zz_generated.defaults.go).
func SetObjectDefaults_MutatingAdmissionPolicy(p *arv1.MutatingAdmissionPolicy) {
	if p.Spec.FailurePolicy == nil {
		p.Spec.FailurePolicy = ptr.To(arv1.Fail)
	}
	if p.Spec.MatchConstraints != nil {
		SetDefaults_MatchResources(p.Spec.MatchConstraints)
	}
}

// SetObjectDefaults_MutatingAdmissionPolicyBinding: the match resources'
// defaults.
func SetObjectDefaults_MutatingAdmissionPolicyBinding(b *arv1.MutatingAdmissionPolicyBinding) {
	if b.Spec.MatchResources != nil {
		SetDefaults_MatchResources(b.Spec.MatchResources)
	}
}
