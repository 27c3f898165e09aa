// Package storageversionmigration is the storage of
// storagemigration.k8s.io/v1 StorageVersionMigrations (cluster-scoped, with
// /status), with upstream's strategy (kubernetes
// pkg/registry/storagemigration/storagemigration): status cleared on create
// and kept on main-resource updates, spec.resource immutable, no
// generation bump (upstream's strategy has none).
//
// kapi serves the objects only. Upstream's storage version migrator (in
// kube-controller-manager, feature StorageVersionMigrator) watches them,
// records the resource's current resourceVersion in status.resourceVersion,
// rewrites every object of spec.resource with no-op updates so they are
// stored in the current storage version, and sets the Running, Succeeded or
// Failed conditions. kapi runs no such controller: a migration stays as
// created until a client updates its status.
package storageversionmigration
