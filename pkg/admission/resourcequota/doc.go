// Package resourcequota is the ResourceQuota validating admission plugin
// (kubernetes plugin/pkg/admission/resourcequota, v1.37): a create (or an
// update of a service or claim) is refused with 403 Forbidden when what it
// charges would take a quota of its namespace over its hard limits
// ("exceeded quota: <name>, requested: ..., used: ..., limited: ..."), and
// otherwise charged to those quotas' status.used before the object is
// stored. Charges are written with the quota's resourceVersion as a
// precondition and the whole check is redone on conflict, so two
// concurrent writes can never both take the last unit of a quota.
//
// Quotas are enforced from their status (status.hard, status.used), which
// the resourcequota controller fills: a quota whose status does not yet
// know a resource it limits refuses writes that charge it ("status unknown
// for quota"), as upstream. Usage only ever increases here: the
// controller gives back what deleted objects held (and what a write that
// failed after admission was charged).
package resourcequota
