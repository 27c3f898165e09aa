// Package apiextensions is the CRD server of the chain
// (apiextensions-apiserver): it serves customresourcedefinitions
// (apiextensions.k8s.io/v1, with their status subresource) and, for every
// established CRD, its custom resources under /apis/<group>/<version>.
//
// [Install] adds everything to the apiextensions server of the chain:
//
//   - the customresourcedefinitions resource: a generic store whose strategy
//     validates CRDs as upstream does for the core rules (name
//     <plural>.<group>, group with a dot, scope, names, exactly one storage
//     version, unique DNS-1035 version names, a schema per version that is
//     an object at its root, status subresource root rules, printer columns,
//     scale paths, storedVersions); group and names.plural are immutable,
//     scope and names.kind too once the CRD is established. Deleting a CRD
//     marks it Terminating and adds the customresourcecleanup finalizer, as
//     upstream;
//   - a controller, started by the post-start hook
//     "start-apiextensions-controllers", that accepts names (NamesAccepted:
//     NoConflicts or a ...Conflict reason against the other CRDs of the
//     group), establishes CRDs (Established: InitialNamesAccepted), keeps
//     status.storedVersions, installs and removes the REST routes and
//     discovery of every served version, publishes their OpenAPI v3
//     documents, and finalizes deleted CRDs (every custom resource deleted,
//     then the finalizer removed and the routes torn down, ending watches);
//   - the MuxAndDiscoveryComplete signal "CRDInformerHasNotSynced", closed
//     once the CRDs stored at start have their routes.
//
// Custom resources are unstructured objects served in JSON and YAML
// (protobuf is not acceptable for them, as upstream), stored as JSON in
// the storage version (conversion strategy None: only apiVersion changes
// between versions). Writes are validated against the version's OpenAPI v3
// schema (k8s.io/kube-openapi's validator), apiVersion and kind must be the
// served ones, and metadata is validated by the generic store.
package apiextensions
