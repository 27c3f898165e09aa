// Package networking validates networking.k8s.io/v1 objects (Ingress,
// IngressClass, NetworkPolicy, IPAddress, ServiceCIDR) as kube-apiserver
// v1.37 does (kubernetes/kubernetes pkg/apis/networking/validation):
// upstream's field paths, error types and messages. The *Fields functions
// leave metadata out (the generic store validates it); the others check
// metadata too, for callers outside a store.
package networking
