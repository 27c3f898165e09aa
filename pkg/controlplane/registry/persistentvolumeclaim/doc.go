// Package persistentvolumeclaim serves core/v1 persistentvolumeclaims
// (short name "pvc") and their status subresource, as kube-apiserver does:
// a new claim's status is cleared (decoding then shows phase Pending), its
// data source fields are normalized (dataSource and dataSourceRef mirror
// each other), updates of the main resource keep the stored status and
// /status keeps the spec; tables show kubectl's NAME STATUS VOLUME
// CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE and, with
// -o wide, VOLUMEMODE.
//
// No volume controller runs behind kapi: claims are never bound by the
// server (they stay Pending or as their status writers leave them).
package persistentvolumeclaim
