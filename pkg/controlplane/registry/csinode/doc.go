// Package csinode is the storage of storage.k8s.io/v1 CSINodes (cluster-scoped, one per node,
// written by kubelets), with upstream's strategy
// (pkg/registry/storage/csinode): a driver's node ID and topology keys are
// immutable.
package csinode
