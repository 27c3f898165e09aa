// Package schema works on the structural OpenAPI v3 schemas of
// CustomResourceDefinition versions (apiextensions.k8s.io/v1
// JSONSchemaProps): the checks the CRD validation runs on them, and
// what custom resources go through against them.
//
//   - [ValidateSchemas]: the structural-schema invariants below the root
//     (types, items, embedded resources, extensions that go together,
//     patterns) and defaults that are pruned and valid, as upstream; a
//     version whose schema did not change on update is not checked again.
//   - [Prune]: the fields a schema does not specify are removed
//     (kept under x-kubernetes-preserve-unknown-fields; apiVersion, kind
//     and metadata kept at the root and in x-kubernetes-embedded-resource
//     objects, whose metadata keeps ObjectMeta's fields).
//   - [ApplyDefaults]: absent (or null, when not nullable) properties get
//     their schema's default, a fresh copy each time.
//   - [Validator]: validation against the schema (k8s.io/kube-openapi's
//     validator) with upstream's field errors; [Validator.ValidateUpdate]
//     drops the errors of values unchanged from the old object
//     (validation ratcheting, KEP-4008).
package schema
