// Package ingress is the storage of networking.k8s.io/v1 Ingresses and their status subresource, with
// upstream's strategy (pkg/registry/networking/ingress): status kept by the
// main resource, generation bumped on spec changes, a warning for the
// deprecated kubernetes.io/ingress.class annotation.
package ingress
