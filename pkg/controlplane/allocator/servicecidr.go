package allocator

import (
	"net/netip"

	networkingv1 "k8s.io/api/networking/v1"
)

// ServiceCIDRFinalizer protects a ServiceCIDR whose range still holds
// allocated addresses (upstream's servicecidrs controller,
// pkg/controller/servicecidrs).
const ServiceCIDRFinalizer = "networking.k8s.io/service-cidr-finalizer"

// Ready condition of a ServiceCIDR as upstream's servicecidrs controller
// writes it.
const (
	ServiceCIDRReadyMessage       = "Kubernetes Service CIDR is ready"
	ServiceCIDRTerminatingMessage = "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR"
)

// CanDeleteServiceCIDR reports whether the finalizer of sc (being
// deleted) may go, as upstream's servicecidrs controller decides: yes if
// another ServiceCIDR of all contains each of its CIDRs; otherwise yes
// unless an IPAddress the allocator manages (of ips) is in sc and in no
// other ServiceCIDR.
func CanDeleteServiceCIDR(sc *networkingv1.ServiceCIDR, all []networkingv1.ServiceCIDR, ips []networkingv1.IPAddress) bool {
	hasParent := true
	for _, s := range sc.Spec.CIDRs {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			continue
		}
		if !otherContains(sc.Name, all, func(q netip.Prefix) bool { return q.Bits() <= p.Bits() && q.Contains(p.Addr()) }) {
			hasParent = false
		}
	}
	if hasParent {
		return true
	}
	for i := range ips {
		ip := &ips[i]
		if ip.Labels[networkingv1.LabelManagedBy] != ControllerName {
			continue
		}
		addr, err := netip.ParseAddr(ip.Name)
		if err != nil {
			continue
		}
		in := false
		for _, s := range sc.Spec.CIDRs {
			if p, err := netip.ParsePrefix(s); err == nil && inPrefix(p.Masked(), addr) {
				in = true
			}
		}
		if in && !otherContains(sc.Name, all, func(q netip.Prefix) bool { return inPrefix(q, addr) }) {
			return false
		}
	}
	return true
}

// otherContains reports whether a ServiceCIDR of all but the one named
// name has a CIDR matching f.
func otherContains(name string, all []networkingv1.ServiceCIDR, f func(netip.Prefix) bool) bool {
	for i := range all {
		if all[i].Name == name {
			continue
		}
		for _, s := range all[i].Spec.CIDRs {
			if q, err := netip.ParsePrefix(s); err == nil && f(q.Masked()) {
				return true
			}
		}
	}
	return false
}
