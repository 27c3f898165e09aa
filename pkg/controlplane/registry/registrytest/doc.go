// Package registrytest helps test the core server's resources: registry
// options on a fresh memory backend, request contexts, and an
// UpdatedObjectInfo for plain updates.
package registrytest
