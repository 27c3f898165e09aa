// Package resource validates resource.k8s.io/v1 (dynamic resource
// allocation) objects with the most common rules of upstream's
// pkg/apis/resource/validation (kubernetes v1.37): device requests (names,
// exactly one of exactly / firstAvailable, device class names, allocation
// mode and count, selectors, tolerations), constraints and configuration
// referencing requests, claim and template specs immutable, claim status
// (allocation immutable once set, reservedFor only when allocated, at most
// 256 consumers), device classes, and resource slices (driver, pool, where
// the devices are, device names, attributes and capacity).
//
// Not checked (left to the components that evaluate them): CEL selector
// expressions are required but not compiled; attribute and capacity
// values beyond their shape; the allocation result's device entries;
// shared counters and counter consumption; partitionable device and
// binding-condition rules; the node-allocatable mappings.
package resource
