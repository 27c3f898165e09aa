package endpoints

import (
	"cmp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// addrKey identifies an address: kube keys them by IP and target UID.
type addrKey struct {
	ip  string
	uid string
}

func keyOf(a *corev1.EndpointAddress) addrKey {
	k := addrKey{ip: a.IP}
	if a.TargetRef != nil {
		k.uid = string(a.TargetRef.UID)
	}
	return k
}

// RepackSubsets returns subsets in kube's canonical layout: every
// (address, port) pair of the input, regrouped so that each subset holds
// the ports offered by exactly the same addresses (with the same
// readiness), addresses and ports sorted, subsets sorted. A ready address
// wins over the same address not ready. Addresses without ports are kept.
func RepackSubsets(subsets []corev1.EndpointSubset) []corev1.EndpointSubset {
	if len(subsets) == 0 {
		return subsets
	}
	addrs := map[addrKey]*corev1.EndpointAddress{}
	// For each port (a sentinel Port -1 for addresses without ports), the
	// addresses offering it and whether each is ready.
	var portOrder []portKey
	byPort := map[portKey]map[addrKey]bool{}
	add := func(port portKey, a *corev1.EndpointAddress, ready bool) {
		k := keyOf(a)
		if _, ok := addrs[k]; !ok {
			addrs[k] = a.DeepCopy()
		}
		m, ok := byPort[port]
		if !ok {
			m = map[addrKey]bool{}
			byPort[port] = m
			portOrder = append(portOrder, port)
		}
		m[k] = m[k] || ready
	}
	for i := range subsets {
		ss := &subsets[i]
		ports := ss.Ports
		if len(ports) == 0 {
			ports = []corev1.EndpointPort{{Port: -1}}
		}
		for _, p := range ports {
			k := portKeyOf(p)
			for j := range ss.Addresses {
				add(k, &ss.Addresses[j], true)
			}
			for j := range ss.NotReadyAddresses {
				add(k, &ss.NotReadyAddresses[j], false)
			}
		}
	}
	// Group ports by the exact set of (address, readiness) offering them.
	type group struct {
		addrs map[addrKey]bool
		ports []corev1.EndpointPort
	}
	groups := map[string]*group{}
	var order []string
	for _, port := range portOrder {
		m := byPort[port]
		h := hashAddrs(m)
		g, ok := groups[h]
		if !ok {
			g = &group{addrs: m}
			groups[h] = g
			order = append(order, h)
		}
		if port.port > 0 {
			g.ports = append(g.ports, fromPortKey(port))
		}
	}
	out := make([]corev1.EndpointSubset, 0, len(groups))
	for _, h := range order {
		g := groups[h]
		ss := corev1.EndpointSubset{Ports: g.ports}
		for k, ready := range g.addrs {
			if ready {
				ss.Addresses = append(ss.Addresses, *addrs[k])
			} else {
				ss.NotReadyAddresses = append(ss.NotReadyAddresses, *addrs[k])
			}
		}
		sortAddrs(ss.Addresses)
		sortAddrs(ss.NotReadyAddresses)
		slices.SortFunc(ss.Ports, func(a, b corev1.EndpointPort) int {
			return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Port, b.Port), cmp.Compare(a.Protocol, b.Protocol))
		})
		out = append(out, ss)
	}
	slices.SortFunc(out, func(a, b corev1.EndpointSubset) int { return cmp.Compare(subsetKey(a), subsetKey(b)) })
	return out
}

// portKey is an EndpointPort as a comparable map key.
type portKey struct {
	name   string
	port   int32
	proto  corev1.Protocol
	app    string
	hasApp bool
}

func portKeyOf(p corev1.EndpointPort) portKey {
	k := portKey{name: p.Name, port: p.Port, proto: p.Protocol}
	if p.AppProtocol != nil {
		k.app, k.hasApp = *p.AppProtocol, true
	}
	return k
}

func fromPortKey(k portKey) corev1.EndpointPort {
	p := corev1.EndpointPort{Name: k.name, Port: k.port, Protocol: k.proto}
	if k.hasApp {
		app := k.app
		p.AppProtocol = &app
	}
	return p
}

func hashAddrs(m map[addrKey]bool) string {
	keys := make([]string, 0, len(m))
	for k, ready := range m {
		r := "n"
		if ready {
			r = "r"
		}
		keys = append(keys, k.ip+"/"+k.uid+"/"+r)
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}

func sortAddrs(a []corev1.EndpointAddress) {
	slices.SortFunc(a, func(x, y corev1.EndpointAddress) int {
		kx, ky := keyOf(&x), keyOf(&y)
		return cmp.Or(cmp.Compare(kx.ip, ky.ip), cmp.Compare(kx.uid, ky.uid))
	})
}

func subsetKey(ss corev1.EndpointSubset) string {
	var b strings.Builder
	for _, a := range ss.Addresses {
		b.WriteString(a.IP + ",")
	}
	b.WriteString("|")
	for _, a := range ss.NotReadyAddresses {
		b.WriteString(a.IP + ",")
	}
	return b.String()
}
