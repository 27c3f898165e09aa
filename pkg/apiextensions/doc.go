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
//     then the finalizer removed and the routes torn down, ending watches).
//     A CRD is shown whole and only once Established: all its served
//     versions' routes in one step, then their discovery, after its
//     Established condition is stored (requests for it wait meanwhile, so
//     that Established also means served; activation.go);
//   - the MuxAndDiscoveryComplete signal "CRDInformerHasNotSynced" and the
//     post-start hook "crd-informer-synced" (a /readyz check), which finish
//     once every established CRD stored at start is served: those are
//     served in one batch (one build per group-version, one discovery
//     rebuild), their OpenAPI documents right after.
//
// What one served version of a CRD serves is package customresource's
// (strategy, /status, /scale, serializer and storage codec, Table,
// selectable fields, server-side apply types); writes are pruned,
// defaulted and validated against the version's structural schema
// (package schema) and its x-kubernetes-validations CEL rules (package
// cel), whose checks are also part of the CRD validation here. This
// package wires them: per CRD a store per served version (crStore, whose
// watches end when the version stops being served), one REST handler per
// group-version shared by its CRDs (creates of a terminating CRD's
// resources are 405s, strategic merge patches 415s), discovery, and the
// OpenAPI v3 documents of each group-version. OpenAPI v2 carries every
// served kind (definitions named as upstream, "com.example.v1.Widget",
// schemas made v2-compatible) beside the v3 documents, and loses them
// when the CRD goes.
package apiextensions
