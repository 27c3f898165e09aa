// Package secret serves core/v1 secrets: stringData is merged into data
// (as kube's conversion does) and never stored, the type defaults to
// Opaque and cannot change, each well-known type has its required keys,
// data totals at most 1 MiB, and `immutable: true` freezes the data. The
// field selector "type" is supported.
package secret
