// Package volumeattributesclass is the storage of storage.k8s.io/v1 VolumeAttributesClasses (cluster-scoped;
// GA in v1.34, served as v1 only by default in v1.37), with upstream's
// strategy (pkg/registry/storage/volumeattributesclass): driverName and
// parameters immutable.
package volumeattributesclass
