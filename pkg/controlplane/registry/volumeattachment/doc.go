// Package volumeattachment is the storage of storage.k8s.io/v1 VolumeAttachments (cluster-scoped) and
// their status subresource, with upstream's strategy
// (pkg/registry/storage/volumeattachment): the spec is immutable, the
// status written through /status only.
package volumeattachment
