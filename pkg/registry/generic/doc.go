// Package generic is the strategy-driven store behind every resource: a
// [Store] implements the capability interfaces of pkg/registry/rest (Getter,
// Lister, Watcher, Creater, Updater, GracefulDeleter, CollectionDeleter,
// TableConvertor, ...) on a storage.Interface, with kube-apiserver's
// semantics, and a per-resource strategy supplies what differs between
// resources (scope, preparation, validation, graceful deletion).
//
// # What the store does for every resource
//
// Create: the request namespace is reconciled with the object's (a
// mismatch is 400 BadRequest), uid and creationTimestamp are set,
// deletionTimestamp and deletionGracePeriodSeconds are cleared, a name is
// generated from generateName (5 random characters; up to 8 attempts when
// the generated name exists), metadata.generation starts at 1 for resources
// whose strategy is a [GenerationStrategy], then metadata (name, namespace,
// labels, annotations, ownerReferences, finalizers, managedFields) and the
// strategy validate the object (422 Invalid with causes). managedFields
// are the handler's.
//
// Update: a read-modify-write through storage.GuaranteedUpdate. The
// object's resourceVersion must match the stored one (409 Conflict with
// kube's message) unless the strategy allows unconditional updates and
// none was given; uid, creationTimestamp, deletionTimestamp and
// deletionGracePeriodSeconds cannot be changed; generation follows the
// strategy; an update that changes nothing writes nothing (same
// resourceVersion). A missing object is created when the strategy (or the
// caller) allows create-on-update. Removing the last finalizer of an object
// that is being deleted deletes it.
//
// Delete: preconditions (uid, resourceVersion), graceful deletion for
// strategies that implement it, finalizers (an object with finalizers gets
// deletionTimestamp and deletionGracePeriodSeconds=0 and stays until they
// are removed), and propagation policies: Orphan adds the "orphan"
// finalizer, Foreground adds "foregroundDeletion", Background (the default)
// deletes at once. As in kube-apiserver, nothing in the API server removes
// those two finalizers: that is the garbage collector's job (a controller),
// so without one such objects stay, marked for deletion.
//
// Dry-run (options.DryRun non-empty, i.e. ["All"]) runs everything but the
// write: storage is not changed and no resourceVersion is consumed.
//
// Errors from storage are translated to the metav1.Status kube-apiserver
// gives by [InterpretStorageError].
//
// # Storage
//
// A resource's NewREST takes [RESTOptions]: a [StorageFactory] that makes
// the storage of one resource from a [StorageConfig] (resource, storage
// version, key prefix, codec, types), and a logger. [NewStore] completes a
// Store on the storage the factory makes for it. One factory serves every
// server of the chain, built-in and custom resources alike: built-in
// resources leave the codec to the factory (protobuf on etcd, JSON on
// memory), custom resources bring the CRD server's. [MemoryStorage] is the
// factory on the memory backend; the etcd one (behind a watch cache) is
// the app's. Table helpers live in pkg/registry/table, test helpers in
// pkg/registry/registrytest.
//
// # Keys
//
// Objects live at <prefix>/<namespace>/<name> (namespaced) or
// <prefix>/<name>, where the prefix is [DefaultResourcePrefix]: "/<resource>"
// for the core group (and for resources kube keeps there: events of
// events.k8s.io share "/events"), "/<group>/<resource>" otherwise.
package generic
