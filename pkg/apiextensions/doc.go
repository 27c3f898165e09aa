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
// served ones, and metadata is validated by the generic store. Valid
// writes then run the schema's x-kubernetes-validations CEL rules
// (cel.dev/cel-go, compiled once per served version, self and oldSelf
// typed from the schema as upstream: objects are struct types with their
// escaped property names, formats date, date-time, duration and byte are
// timestamps, durations and bytes, int-or-string is dyn; upstream's list
// and regex libraries; oldSelf transition rules only on update where an
// old value correlates, or with optionalOldSelf; per-call and per-object
// cost limits as upstream). Rules that do not type-check, whose
// estimated cost is above upstream's static limits, or that use oldSelf
// below a list whose items cannot be correlated make the CRD invalid. On
// update, schema errors and rule failures of values unchanged from the
// old object are dropped (validation ratcheting, KEP-4008).
//
// Before validation, writes (create, update, status) are pruned of the
// fields their version's structural schema does not specify (kept under
// x-kubernetes-preserve-unknown-fields; apiVersion, kind and metadata kept
// at the root and in x-kubernetes-embedded-resource objects) and get the
// schema's defaults. Pruned fields are Warning headers under
// fieldValidation=Warn (the default), a 400 under Strict, silent under
// Ignore, on the main resource and on /status alike. Reads from storage
// (get, list, watch) get the defaults too.
//
// Every write records metadata.managedFields and server-side apply
// (application/apply-patch+yaml) is served, as upstream: the field
// manager's structured-merge-diff types come from each version's schema
// (apiVersion, kind and ObjectMeta at the root and in embedded resources;
// x-kubernetes-list-type, -list-map-keys, -map-type,
// -preserve-unknown-fields and -int-or-string honoured); status is reset
// on the main resource, spec on /status; conflicts are 409s.
//
// Versions with spec.subresources.scale serve <plural>/scale as
// autoscaling/v1 Scale over the CRD's replica paths (a missing spec
// replicas field is a 500 on get, a 400 on an update that leaves it
// unset; managed fields of the replicas path move between the object and
// its Scale). Versions' selectableFields are field selector labels of
// list and watch (other labels: "field label not supported: ..."). Table
// output honours includeObject (None, Metadata, Object) on get, list and
// watch. OpenAPI v2 carries every served kind (definitions named as
// upstream, "com.example.v1.Widget", schemas made v2-compatible) beside
// the v3 documents, and loses them when the CRD goes.
package apiextensions
