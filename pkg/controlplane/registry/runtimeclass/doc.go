// Package runtimeclass is the storage of node.k8s.io/v1 RuntimeClasses (cluster-scoped), with
// upstream's strategy (pkg/registry/node/runtimeclass): the handler is
// immutable.
package runtimeclass
