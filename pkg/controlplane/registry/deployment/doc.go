// Package deployment serves apps/v1 deployments with their status and
// scale (autoscaling/v1 Scale) subresources, as kube-apiserver's
// pkg/registry/apps/deployment (v1.37): status is written only through
// /status, metadata.generation bumps when the spec or the annotations
// change (annotations are copied to the deployment's replicasets), the
// selector is immutable. No controller acts on deployments in kapi: they
// stay as written (no replicasets, no status), as on a kube-apiserver
// started alone.
package deployment
