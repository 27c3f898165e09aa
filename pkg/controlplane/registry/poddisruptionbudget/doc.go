// Package poddisruptionbudget is the storage of policy/v1
// PodDisruptionBudgets and their status subresource, with upstream's
// strategy (pkg/registry/policy/poddisruptionbudget).
//
// No disruption controller runs in kapi: a budget's status (in particular
// disruptionsAllowed, which evictions consume) is what clients write
// through /status; a new budget allows no disruption until then.
package poddisruptionbudget
