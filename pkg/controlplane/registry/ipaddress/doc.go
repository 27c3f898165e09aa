// Package ipaddress is the storage of networking.k8s.io/v1 IPAddresses (cluster-scoped, named by
// the canonical form of the address), with upstream's strategy
// (pkg/registry/networking/ipaddress): the parent reference is immutable.
//
// The Service ClusterIP allocator (pkg/controlplane/allocator) writes one
// IPAddress per allocated ClusterIP through this resource's storage, as
// kube-apiserver v1.37 does.
package ipaddress
