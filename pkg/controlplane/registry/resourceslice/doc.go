// Package resourceslice is the storage of resource.k8s.io/v1
// ResourceSlices (cluster-scoped), with upstream's strategy (kubernetes
// pkg/registry/resource/resourceslice, v1.37): generation bumped on spec
// changes, driver, pool and node immutable, field selectors spec.nodeName,
// spec.driver and spec.pool.name.
package resourceslice
