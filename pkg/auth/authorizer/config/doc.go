// Package config reads the structured authorization configuration of
// --authorization-config: an apiserver.config.k8s.io/v1 (or v1beta1,
// v1alpha1) AuthorizationConfiguration listing the authorizers in order
// (AlwaysAllow, AlwaysDeny, RBAC, Node, Webhook), a webhook with its
// connection (a kubeconfig file), timeout, review versions, failure policy,
// cache TTLs and CEL matchConditions, validated as upstream's
// k8s.io/apiserver/pkg/apis/apiserver/validation does (the field paths and
// messages of the most common errors).
package config
