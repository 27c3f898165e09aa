// Package csistoragecapacity is the storage of storage.k8s.io/v1 CSIStorageCapacities, with upstream's
// strategy (pkg/registry/storage/csistoragecapacity): nodeTopology and
// storageClassName immutable.
package csistoragecapacity
