// Package allocator hands out Service ClusterIPs (from
// --service-cluster-ip-range) and NodePorts (from
// --service-node-port-range).
//
// Every allocation is its own object in storage, one key per allocated
// value ("/ranges/serviceips/10.0.0.7", "/ranges/servicenodeports/30080"),
// written with storage Create. The backend's "key exists" is what makes an
// allocation exclusive, so allocators in several kapi processes on one etcd
// (and a new allocator after a restart) can never hand out the same value
// twice, with no in-memory state to rebuild and no bitmap to
// compare-and-swap. (kube-apiserver keeps NodePorts as one bitmap object
// updated with compare-and-swap, and, since 1.33, each ClusterIP as its own
// IPAddress object: this package does the latter for both.)
//
// An allocation object is a coordination.k8s.io/v1 Lease (the type is only
// the storage format: it is not served at these keys) whose
// holderIdentity names the owner, e.g. "services/default/web".
//
// Errors match kube's allocators: [ErrFull] ("range is full"),
// [ErrAllocated] ("provided IP is already allocated" / "provided port is
// already allocated") and [*ErrNotInRange].
package allocator
