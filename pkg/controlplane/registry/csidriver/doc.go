// Package csidriver is the storage of storage.k8s.io/v1 CSIDrivers (cluster-scoped), with
// upstream's strategy (pkg/registry/storage/csidriver): attachRequired,
// fsGroupPolicy and volumeLifecycleModes immutable.
package csidriver
