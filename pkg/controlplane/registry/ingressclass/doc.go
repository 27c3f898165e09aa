// Package ingressclass is the storage of networking.k8s.io/v1 IngressClasses (cluster-scoped), with upstream's
// strategy (pkg/registry/networking/ingressclass): generation bumped on spec
// changes, the controller immutable.
package ingressclass
