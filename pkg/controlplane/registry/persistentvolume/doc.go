// Package persistentvolume serves core/v1 persistentvolumes
// (cluster-scoped, short name "pv") and their status subresource, as
// kube-apiserver does: a new volume's status is reset to phase Pending
// with the time of that transition, updates of the main resource keep the
// stored status and /status keeps the spec (recording when the phase
// changes); tables show kubectl's NAME CAPACITY ACCESS MODES RECLAIM
// POLICY STATUS CLAIM STORAGECLASS VOLUMEATTRIBUTESCLASS REASON AGE and,
// with -o wide, VOLUMEMODE.
//
// No volume controller runs behind kapi: volumes are never bound, released
// or recycled by the server (they stay Pending or as their status writers
// leave them).
package persistentvolume
