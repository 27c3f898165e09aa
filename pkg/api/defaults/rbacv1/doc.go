// Package rbacv1 defaults rbac.authorization.k8s.io/v1 objects as
// upstream's pkg/apis/rbac/v1/defaults.go: a roleRef's apiGroup is the
// RBAC group, a User or Group subject's apiGroup the RBAC group, a
// ServiceAccount subject's the core group ("").
package rbacv1
