// Package controlplane is the core API server's content: the built-in
// resources it serves (with their storage), the bootstrap objects it
// creates, and the in-process controllers kapi runs so that it behaves as a
// cluster would without kube-controller-manager for them (namespace
// deletion).
//
// Served: core/v1 namespaces (+status, finalize), configmaps, secrets,
// serviceaccounts, events, services (+status; ClusterIP and NodePort
// allocation in package allocator), endpoints; discovery.k8s.io/v1
// endpointslices; events.k8s.io/v1 events; coordination.k8s.io/v1 leases;
// authentication.k8s.io/v1 selfsubjectreviews. The bootstrap-controller
// hook keeps the "kubernetes" Service in "default" and its endpoints.
// There is no endpoints controller: kube runs it in
// kube-controller-manager, so Endpoints and EndpointSlices are what
// clients write.
package controlplane
