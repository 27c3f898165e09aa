// Package deviceclass is the storage of resource.k8s.io/v1 DeviceClasses
// (cluster-scoped), with upstream's strategy (kubernetes
// pkg/registry/resource/deviceclass, v1.37): generation bumped on spec
// changes.
package deviceclass
