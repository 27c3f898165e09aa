// Package rbac is kube-apiserver's RBAC authorizer: Roles and ClusterRoles
// hold PolicyRules, RoleBindings and ClusterRoleBindings grant them to
// users, groups and service accounts. It also resolves a user's rules (for
// selfsubjectrulesreviews and the escalation checks of the RBAC registry),
// holds the bootstrap policy a fresh kube-apiserver creates and reconciles
// it, and aggregates ClusterRoles.
//
// The behaviour follows kubernetes/kubernetes
// plugin/pkg/auth/authorizer/rbac (rbac.go, subject_locator.go),
// pkg/registry/rbac/validation (rule.go, policy_compact.go,
// policy_comparator.go) and pkg/apis/rbac/v1/evaluation_helpers.go; the
// code is kapi's own.
package rbac
