// Package apiservice serves apiregistration.k8s.io/v1 apiservices (and
// apiservices/status) as kube-aggregator does: validation, status
// strategy, the NAME SERVICE AVAILABLE AGE table, and helpers for the
// Available condition that the aggregator's controllers maintain.
//
// Importing the package registers apiregistration.k8s.io/v1 (with its
// defaults: spec.service.port 443) in pkg/api/scheme.Scheme.
package apiservice
