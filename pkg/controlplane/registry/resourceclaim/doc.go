// Package resourceclaim is the storage of resource.k8s.io/v1
// ResourceClaims and their status subresource, with upstream's strategy
// (kubernetes pkg/registry/resource/resourceclaim, v1.37): the spec is
// immutable, the status is written through /status only (by the
// scheduler and the drivers).
package resourceclaim
