// Package validation checks the built-in objects the core server stores
// (namespaces, configmaps, secrets, serviceaccounts, events, leases) as
// kube-apiserver's pkg/apis/core/validation and
// pkg/apis/coordination/validation do, with the same field paths, error
// types and messages. It works on the versioned types of k8s.io/api: kapi
// has no internal API versions.
//
// Each kind has two sets of functions:
//
//   - Validate<Kind> and Validate<Kind>Update check a whole object, its
//     metadata included (ObjectMeta through
//     k8s.io/apimachinery/pkg/api/validation with the kind's name rule),
//     as upstream's functions of the same name do.
//   - Validate<Kind>Fields and Validate<Kind>UpdateFields check everything
//     but the generic metadata rules. They are what the resources'
//     strategies call: the generic store (pkg/registry/generic) validates
//     metadata itself, with the kind's name rule, before it asks the
//     strategy. The core-only metadata rule (finalizer names must be
//     standard or fully qualified, see [ValidateKubeFinalizerNames]) is
//     part of the Fields functions, since the generic store does not know
//     it.
//
// No function mutates its arguments: where upstream's validation copies
// fields from the old object (e.g. a namespace's status on update), kapi's
// strategies do it in PrepareForUpdate.
package validation
