package service

import (
	corev1 "k8s.io/api/core/v1"

	coredefaults "github.com/kapi-dev/kapi/pkg/api/defaults/corev1"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
)

// SetDefaults applies kube's v1 defaults for a Service: what
// kube-apiserver does when it decodes one, and what the scheme's defaulting
// does here (coredefaults.SetObjectDefaults_Service); the registry applies
// them again for objects that reach it otherwise.
func SetDefaults(svc *corev1.Service) {
	coredefaults.SetObjectDefaults_Service(svc)
}

// normalizeClusterIPs keeps clusterIP and clusterIPs in sync, as kube: a
// client may manage either one; on an update, the one the client changed
// (or cleared) wins when the other was left as it was.
func normalizeClusterIPs(svc, old *corev1.Service) {
	spec := &svc.Spec
	if spec.ClusterIP == "" && len(spec.ClusterIPs) == 0 {
		return
	}
	if old == nil {
		if spec.ClusterIP != "" && len(spec.ClusterIPs) == 0 {
			spec.ClusterIPs = []string{spec.ClusterIP}
		}
		if spec.ClusterIP == "" && len(spec.ClusterIPs) > 0 {
			spec.ClusterIP = spec.ClusterIPs[0]
		}
		return
	}
	sameIPs := sameStrings(spec.ClusterIPs, old.Spec.ClusterIPs)
	switch {
	case old.Spec.ClusterIP != "" && spec.ClusterIP == "":
		// clusterIP cleared: clear clusterIPs if left as they were.
		if sameIPs {
			spec.ClusterIPs = nil
		}
	case len(old.Spec.ClusterIPs) > 0 && len(spec.ClusterIPs) == 0:
		// clusterIPs cleared: clear clusterIP if left as it was.
		if old.Spec.ClusterIP == spec.ClusterIP {
			spec.ClusterIP = ""
		}
	case old.Spec.ClusterIP != "" && spec.ClusterIP != "" && old.Spec.ClusterIP != spec.ClusterIP:
		// clusterIP changed: follow it in clusterIPs if left as they were.
		if sameIPs {
			if len(spec.ClusterIPs) == 0 {
				spec.ClusterIPs = []string{spec.ClusterIP}
			} else {
				spec.ClusterIPs = append([]string{spec.ClusterIP}, spec.ClusterIPs[1:]...)
			}
		}
	case len(old.Spec.ClusterIPs) > 0 && len(spec.ClusterIPs) > 0 && old.Spec.ClusterIPs[0] != spec.ClusterIPs[0]:
		// clusterIPs[0] changed: follow it in clusterIP if left as it was.
		if old.Spec.ClusterIP == spec.ClusterIP {
			spec.ClusterIP = spec.ClusterIPs[0]
		}
	case spec.ClusterIP != "" && len(spec.ClusterIPs) == 0:
		spec.ClusterIPs = []string{spec.ClusterIP}
	case spec.ClusterIP == "" && len(spec.ClusterIPs) > 0:
		spec.ClusterIP = spec.ClusterIPs[0]
	}
}

// patchAllocatedValues fills in, on an update, the allocated values a
// client omitted (a PUT of a manifest without clusterIP or nodePorts),
// for idempotence.
func patchAllocatedValues(svc, old *corev1.Service) {
	if needsClusterIP(old) && needsClusterIP(svc) {
		if svc.Spec.ClusterIP == "" {
			svc.Spec.ClusterIP = old.Spec.ClusterIP
		}
		if len(svc.Spec.ClusterIPs) == 0 && svc.Spec.ClusterIP == old.Spec.ClusterIP {
			svc.Spec.ClusterIPs = append([]string(nil), old.Spec.ClusterIPs...)
		}
	}
	if needsNodePort(old) && needsNodePort(svc) {
		used := map[int32]bool{}
		for _, p := range svc.Spec.Ports {
			if p.NodePort != 0 {
				used[p.NodePort] = true
			}
		}
		byName := map[string]int32{}
		for _, p := range old.Spec.Ports {
			byName[p.Name] = p.NodePort
		}
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if p.NodePort == 0 {
				if np := byName[p.Name]; np != 0 && !used[np] {
					p.NodePort = np
					used[np] = true
				}
			}
		}
	}
	if needsHCNodePort(old) && needsHCNodePort(svc) && svc.Spec.HealthCheckNodePort == 0 {
		svc.Spec.HealthCheckNodePort = old.Spec.HealthCheckNodePort
	}
}

// dropTypeDependentFields clears, on an update, the fields the new type
// does not use, when the client did not change them (so that a type change
// needs no other edit).
func dropTypeDependentFields(svc, old *corev1.Service) {
	if needsClusterIP(old) && !needsClusterIP(svc) {
		if svc.Spec.ClusterIP == old.Spec.ClusterIP && sameStrings(svc.Spec.ClusterIPs, old.Spec.ClusterIPs) {
			svc.Spec.ClusterIP = ""
			svc.Spec.ClusterIPs = nil
		}
		if sameFamilies(svc.Spec.IPFamilies, old.Spec.IPFamilies) {
			svc.Spec.IPFamilies = nil
		}
		if samePtr(svc.Spec.IPFamilyPolicy, old.Spec.IPFamilyPolicy) {
			svc.Spec.IPFamilyPolicy = nil
		}
	}
	if needsNodePort(old) && !needsNodePort(svc) && sameNodePorts(svc, old) {
		for i := range svc.Spec.Ports {
			svc.Spec.Ports[i].NodePort = 0
		}
	}
	if needsHCNodePort(old) && !needsHCNodePort(svc) && svc.Spec.HealthCheckNodePort == old.Spec.HealthCheckNodePort {
		svc.Spec.HealthCheckNodePort = 0
	}
	if old.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.Type != corev1.ServiceTypeLoadBalancer &&
		svc.Spec.AllocateLoadBalancerNodePorts != nil && old.Spec.AllocateLoadBalancerNodePorts != nil &&
		*svc.Spec.AllocateLoadBalancerNodePorts == *old.Spec.AllocateLoadBalancerNodePorts {
		svc.Spec.AllocateLoadBalancerNodePorts = nil
	}
	if old.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.Type != corev1.ServiceTypeLoadBalancer &&
		samePtr(svc.Spec.LoadBalancerClass, old.Spec.LoadBalancerClass) {
		svc.Spec.LoadBalancerClass = nil
	}
	if validation.ExternallyAccessible(old) && !validation.ExternallyAccessible(svc) &&
		svc.Spec.ExternalTrafficPolicy == old.Spec.ExternalTrafficPolicy {
		svc.Spec.ExternalTrafficPolicy = ""
	}
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		svc.Status.LoadBalancer = corev1.LoadBalancerStatus{}
	}
}

func needsClusterIP(svc *corev1.Service) bool { return svc.Spec.Type != corev1.ServiceTypeExternalName }

func needsNodePort(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer
}

func needsHCNodePort(svc *corev1.Service) bool { return validation.NeedsHealthCheck(svc) }

// shouldAllocateNodePorts: NodePorts get ports, LoadBalancers unless
// allocateLoadBalancerNodePorts is false.
func shouldAllocateNodePorts(svc *corev1.Service) bool {
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeLoadBalancer:
		return svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sameFamilies(a, b []corev1.IPFamily) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func samePtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func sameNodePorts(svc, old *corev1.Service) bool {
	// Ports matched by index: a client that kept the nodePorts as they were.
	if len(svc.Spec.Ports) != len(old.Spec.Ports) {
		for _, p := range svc.Spec.Ports {
			if p.NodePort != 0 {
				found := false
				for _, o := range old.Spec.Ports {
					if o.NodePort == p.NodePort {
						found = true
					}
				}
				if !found {
					return false
				}
			}
		}
		return true
	}
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].NodePort != old.Spec.Ports[i].NodePort {
			return false
		}
	}
	return true
}
