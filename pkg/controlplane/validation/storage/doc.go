// Package storage validates storage.k8s.io/v1 objects (StorageClass,
// CSIDriver, CSINode, CSIStorageCapacity, VolumeAttachment,
// VolumeAttributesClass) as kube-apiserver v1.37 does
// (kubernetes/kubernetes pkg/apis/storage/validation): upstream's field
// paths, error types and messages. The *Fields functions leave metadata
// out (the generic store validates it).
package storage
