package service

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestNormalizeClusterIPs(t *testing.T) {
	with := func(ip string, ips ...string) *corev1.Service {
		return &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: ip, ClusterIPs: ips}}
	}
	old := with("10.0.0.5", "10.0.0.5")
	for _, tc := range []struct {
		name    string
		svc     *corev1.Service
		old     *corev1.Service
		wantIP  string
		wantIPs []string
	}{
		{"create, clusterIP", with("10.0.0.5"), nil, "10.0.0.5", []string{"10.0.0.5"}},
		{"create, clusterIPs", with("", "10.0.0.5"), nil, "10.0.0.5", []string{"10.0.0.5"}},
		{"create, none", with(""), nil, "", nil},
		{"update, clusterIP cleared", with("", "10.0.0.5"), old, "", nil},
		{"update, clusterIPs cleared", with("10.0.0.5"), old, "", nil},
		{"update, clusterIP changed", with("10.0.0.6", "10.0.0.5"), old, "10.0.0.6", []string{"10.0.0.6"}},
		{"update, clusterIPs changed", with("10.0.0.5", "10.0.0.6"), old, "10.0.0.6", []string{"10.0.0.6"}},
		{"update, both changed apart", with("10.0.0.7", "10.0.0.6"), old, "10.0.0.7", []string{"10.0.0.6"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			normalizeClusterIPs(tc.svc, tc.old)
			if tc.svc.Spec.ClusterIP != tc.wantIP || !slices.Equal(tc.svc.Spec.ClusterIPs, tc.wantIPs) {
				t.Errorf("got %q %v, want %q %v", tc.svc.Spec.ClusterIP, tc.svc.Spec.ClusterIPs, tc.wantIP, tc.wantIPs)
			}
		})
	}
}

func TestSetDefaults(t *testing.T) {
	s := &corev1.Service{Spec: corev1.ServiceSpec{
		SessionAffinity: corev1.ServiceAffinityClientIP,
		Type:            corev1.ServiceTypeLoadBalancer,
		Ports:           []corev1.ServicePort{{Port: 443}},
	}}
	SetDefaults(s)
	if c := s.Spec.SessionAffinityConfig; c == nil || c.ClientIP == nil || *c.ClientIP.TimeoutSeconds != corev1.DefaultClientIPServiceAffinitySeconds {
		t.Errorf("got affinity config %+v, want the default timeout (10800)", c)
	}
	if s.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster || s.Spec.AllocateLoadBalancerNodePorts == nil ||
		!*s.Spec.AllocateLoadBalancerNodePorts || *s.Spec.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyCluster {
		t.Errorf("got %+v, want LoadBalancer defaults", s.Spec)
	}
	if p := s.Spec.Ports[0]; p.Protocol != corev1.ProtocolTCP || p.TargetPort.IntVal != 443 {
		t.Errorf("got port %+v, want TCP and targetPort 443", p)
	}
	none := &corev1.Service{Spec: corev1.ServiceSpec{SessionAffinityConfig: &corev1.SessionAffinityConfig{}}}
	SetDefaults(none)
	if none.Spec.SessionAffinity != corev1.ServiceAffinityNone || none.Spec.SessionAffinityConfig != nil || none.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("got %+v, want affinity None without config, type ClusterIP", none.Spec)
	}
}
