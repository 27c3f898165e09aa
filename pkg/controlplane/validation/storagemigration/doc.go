// Package storagemigration validates storagemigration.k8s.io/v1
// StorageVersionMigrations as upstream's pkg/apis/storagemigration/validation
// (kubernetes, newest stored commit 2dd1588, adapted to v1 whose
// spec.resource is a GroupResource without version): the resource is
// required and immutable, status.resourceVersion is a non-negative integer
// that cannot change once set, conditions are valid metav1.Conditions, and
// Succeeded/Failed/Running follow the migrator's state machine.
package storagemigration
