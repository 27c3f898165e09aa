// Package servicecidr is the storage of networking.k8s.io/v1 ServiceCIDRs (cluster-scoped) and their
// status subresource, with upstream's strategy
// (pkg/registry/networking/servicecidr): the CIDRs are immutable except
// that a single-family ServiceCIDR may gain the other family.
//
// The "kubernetes" ServiceCIDR of --service-cluster-ip-range is kept by
// the control plane (pkg/controlplane, storage_networking.go). Known gaps:
// kapi's ClusterIP allocator allocates from --service-cluster-ip-range
// only (ServiceCIDRs users add do not extend it, as they do upstream), and
// no servicecidrs controller adds the
// networking.k8s.io/service-cidr-finalizer (kube-controller-manager's
// job upstream).
package servicecidr
