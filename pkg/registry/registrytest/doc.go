// Package registrytest helps test resources built on pkg/registry/generic:
// REST options on a fresh memory backend, request contexts, and
// UpdatedObjectInfos for plain updates and patches.
package registrytest
