// Package ipaddress is the storage of networking.k8s.io/v1 IPAddresses (cluster-scoped, named by
// the canonical form of the address), with upstream's strategy
// (pkg/registry/networking/ipaddress): the parent reference is immutable.
//
// Known gap: kapi's ClusterIP allocator (pkg/controlplane/allocator) keeps
// its own storage key per allocation and does not write IPAddress objects
// (kube-apiserver v1.37 writes one per ClusterIP). The objects are served
// and stored for clients that write them.
package ipaddress
