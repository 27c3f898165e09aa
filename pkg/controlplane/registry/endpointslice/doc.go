// Package endpointslice serves discovery.k8s.io/v1 endpointslices,
// validated as kube's discovery validation (addressType IPv4, IPv6 or
// FQDN, immutable; at most 1000 endpoints of 1-100 addresses; at most
// 20000 ports), with kube's defaults (port name "", protocol TCP) and
// metadata.generation bumped when anything but metadata changes. A slice
// names its Service in the label kubernetes.io/service-name.
//
// No endpointslice controller runs in kapi (kube runs it in
// kube-controller-manager): slices are written by clients, except the
// "kubernetes" Service's, which the control plane's bootstrap controller
// keeps.
package endpointslice
