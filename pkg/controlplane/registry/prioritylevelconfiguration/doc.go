// Package prioritylevelconfiguration is the storage of
// flowcontrol.apiserver.k8s.io/v1 PriorityLevelConfigurations and their
// status subresource, with upstream's strategy
// (pkg/registry/flowcontrol/prioritylevelconfiguration).
package prioritylevelconfiguration
