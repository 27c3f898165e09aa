// Package storage defines the one contract between resources and data:
// [Interface], with etcd's semantics (DESIGN.md §4). Backends live in
// sub-packages (etcd3, memory, cacher) and all pass the conformance suite in
// storagetest, so they cannot drift.
package storage
