// Package storageclass is the storage of storage.k8s.io/v1 StorageClasses (cluster-scoped), with
// upstream's strategy (pkg/registry/storage/storageclass): provisioner,
// parameters, reclaimPolicy and volumeBindingMode immutable. The table
// marks the default class (the storageclass.kubernetes.io/is-default-class
// annotation) "(default)"; the DefaultStorageClass admission plugin finds
// it by listing the store.
package storageclass
