package networkingv1

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// RegisterDefaults registers the covering defaulters of NetworkPolicy and
// IngressClass and their lists on s (Ingress, IPAddress and ServiceCIDR
// have no defaults in v1).
func RegisterDefaults(s *runtime.Scheme) error {
	s.AddTypeDefaultingFunc(&networkingv1.NetworkPolicy{}, func(obj any) { SetObjectDefaults_NetworkPolicy(obj.(*networkingv1.NetworkPolicy)) })
	s.AddTypeDefaultingFunc(&networkingv1.NetworkPolicyList{}, func(obj any) {
		l := obj.(*networkingv1.NetworkPolicyList)
		for i := range l.Items {
			SetObjectDefaults_NetworkPolicy(&l.Items[i])
		}
	})
	s.AddTypeDefaultingFunc(&networkingv1.IngressClass{}, func(obj any) { SetObjectDefaults_IngressClass(obj.(*networkingv1.IngressClass)) })
	s.AddTypeDefaultingFunc(&networkingv1.IngressClassList{}, func(obj any) {
		l := obj.(*networkingv1.IngressClassList)
		for i := range l.Items {
			SetObjectDefaults_IngressClass(&l.Items[i])
		}
	})
	return nil
}

// SetDefaults_NetworkPolicyPort defaults a port's protocol to TCP.
func SetDefaults_NetworkPolicyPort(obj *networkingv1.NetworkPolicyPort) {
	if obj.Protocol == nil {
		obj.Protocol = ptr.To(corev1.ProtocolTCP)
	}
}

// SetDefaults_NetworkPolicy defaults policyTypes: a policy that lists none
// is an Ingress policy, and an Egress one too when it has egress rules.
func SetDefaults_NetworkPolicy(obj *networkingv1.NetworkPolicy) {
	if len(obj.Spec.PolicyTypes) == 0 {
		obj.Spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(obj.Spec.Egress) != 0 {
			obj.Spec.PolicyTypes = append(obj.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
	}
}

// SetDefaults_IngressClass defaults a parameters reference's scope to
// Cluster.
func SetDefaults_IngressClass(obj *networkingv1.IngressClass) {
	if obj.Spec.Parameters != nil && obj.Spec.Parameters.Scope == nil {
		obj.Spec.Parameters.Scope = ptr.To(networkingv1.IngressClassParametersReferenceScopeCluster)
	}
}

// SetObjectDefaults_NetworkPolicy applies the policy's defaults, then each
// ingress and egress port's.
func SetObjectDefaults_NetworkPolicy(in *networkingv1.NetworkPolicy) {
	SetDefaults_NetworkPolicy(in)
	for i := range in.Spec.Ingress {
		for j := range in.Spec.Ingress[i].Ports {
			SetDefaults_NetworkPolicyPort(&in.Spec.Ingress[i].Ports[j])
		}
	}
	for i := range in.Spec.Egress {
		for j := range in.Spec.Egress[i].Ports {
			SetDefaults_NetworkPolicyPort(&in.Spec.Egress[i].Ports[j])
		}
	}
}

// SetObjectDefaults_IngressClass applies the class's defaults.
func SetObjectDefaults_IngressClass(in *networkingv1.IngressClass) {
	SetDefaults_IngressClass(in)
}
