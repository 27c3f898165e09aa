// Package networkpolicy is the storage of networking.k8s.io/v1 NetworkPolicies, with upstream's strategy
// (pkg/registry/networking/networkpolicy): generation bumped on spec
// changes. No network plugin runs in kapi: policies are stored and served.
package networkpolicy
