// Package replicaset serves apps/v1 replicasets with their status and
// scale (autoscaling/v1 Scale) subresources, as kube-apiserver's
// pkg/registry/apps/replicaset (v1.37): status is written only through
// /status, metadata.generation bumps on spec changes, the selector is
// immutable, and status.replicas is a field selector. No controller
// creates pods for them in kapi.
package replicaset
