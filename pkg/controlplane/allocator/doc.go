// Package allocator hands out Service ClusterIPs and NodePorts.
//
// ClusterIPs ([IPs]) are allocated as kube-apiserver v1.37 does with the
// MultiCIDRServiceAllocator (GA and locked on since 1.33): each allocated
// address is a networking.k8s.io/v1 IPAddress object named by the address,
// whose parentRef is the Service, labelled
// ipaddress.kubernetes.io/ip-family and
// ipaddress.kubernetes.io/managed-by=ipallocator.k8s.io, written through
// the ipaddresses resource's storage (so it is served and watched). The
// pool is --service-cluster-ip-range plus the ranges of the usable
// ServiceCIDRs. [CanDeleteServiceCIDR] is the rule of the ServiceCIDR
// finalizer.
//
// NodePorts ([Ports], from --service-node-port-range) are one key per
// allocated port ("/ranges/servicenodeports/30080"), a
// coordination.k8s.io/v1 Lease (only the storage format: it is not served
// at these keys) whose holderIdentity names the owner, e.g.
// "services/default/web". (kube-apiserver keeps NodePorts as one bitmap
// object updated with compare-and-swap.)
//
// In both, storage Create is what makes an allocation exclusive: the
// backend's "key exists" means taken, so allocators in several kapi
// processes on one etcd (and a new allocator after a restart) never hand
// out the same value twice, with no in-memory state to rebuild.
//
// Errors match kube's allocators: [ErrFull] ("range is full"),
// [ErrAllocated] ("provided IP is already allocated" / "provided port is
// already allocated"), [ErrMismatchedNetwork] for an address in no
// ServiceCIDR, and [*ErrNotInRange] for a port outside the range.
package allocator
