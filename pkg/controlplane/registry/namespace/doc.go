// Package namespace serves core/v1 namespaces and their status and
// finalize subresources, with kube's lifecycle:
//
//   - create: status.phase is Active and spec.finalizers holds
//     "kubernetes"; the label kubernetes.io/metadata.name is the name;
//   - update of the main resource changes neither status nor
//     spec.finalizers; /status changes only the status; /finalize changes
//     spec.finalizers (and never the status);
//   - the first delete sets deletionTimestamp and phase Terminating (and
//     the orphan / foregroundDeletion finalizers the propagation policy
//     asks for) and keeps the namespace; later deletes answer the
//     namespace as is while spec.finalizers is not empty;
//   - once spec.finalizers is empty (through /finalize) and no metadata
//     finalizer is left, the namespace is deleted: by that update, or by
//     the next delete.
//
// Emptying a terminating namespace and its spec.finalizers is the
// namespace lifecycle controller's job, not this package's.
package namespace
