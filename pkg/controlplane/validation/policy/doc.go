// Package policy checks policy/v1 PodDisruptionBudgets as kube-apiserver's
// pkg/apis/policy/validation does (v1.37), with the same field paths,
// error types and messages.
//
// The Validate<Kind>Fields functions leave out the generic metadata rules,
// which the generic store checks itself.
package policy
