// Package statefulset serves apps/v1 statefulsets with their status and
// scale (autoscaling/v1 Scale) subresources, as kube-apiserver's
// pkg/registry/apps/statefulset (v1.37): status is written only through
// /status, metadata.generation bumps on spec changes, and an update may
// change only replicas, ordinals, template, updateStrategy,
// persistentVolumeClaimRetentionPolicy and minReadySeconds. No controller
// creates pods or claims for them in kapi.
package statefulset
