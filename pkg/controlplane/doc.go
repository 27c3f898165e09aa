// Package controlplane is the core API server's content: the built-in
// resources it serves (with their storage), the bootstrap objects it
// creates, and the in-process controllers kapi runs so that it behaves as a
// cluster would without kube-controller-manager for them (namespace
// deletion).
//
// The resources are declared in one table per API group (storage_<group>.go,
// upstream's RESTStorageProvider shape: group -> version -> resource ->
// storage); the resources themselves (strategy, validation, NewREST) live
// in registry/<resource>. Adding a built-in resource is writing its
// strategy and storage there and adding one line to its group's table:
// Install derives the routes, discovery, the namespace controller's
// content, the field selector labels and the storage's release from the
// tables (see storage.go).
//
// Served: core/v1 namespaces (+status, finalize), configmaps, secrets,
// serviceaccounts, events, services (+status; ClusterIP and NodePort
// allocation in package allocator), endpoints; discovery.k8s.io/v1
// endpointslices; events.k8s.io/v1 events; coordination.k8s.io/v1 leases;
// authentication.k8s.io/v1 selfsubjectreviews and tokenreviews;
// authorization.k8s.io/v1 subject, self-subject and local subject access
// reviews and self-subject rules reviews. The bootstrap-controller hook
// keeps the "kubernetes" Service in "default" and its endpoints. There is
// no endpoints controller: kube runs it in kube-controller-manager, so
// Endpoints and EndpointSlices are what clients write.
package controlplane
