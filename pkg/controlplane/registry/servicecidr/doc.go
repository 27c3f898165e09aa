// Package servicecidr is the storage of networking.k8s.io/v1 ServiceCIDRs (cluster-scoped) and their
// status subresource, with upstream's strategy
// (pkg/registry/networking/servicecidr): the CIDRs are immutable except
// that a single-family ServiceCIDR may gain the other family.
package servicecidr
