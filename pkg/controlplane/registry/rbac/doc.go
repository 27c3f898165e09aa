// Package rbac serves rbac.authorization.k8s.io/v1 roles, clusterroles,
// rolebindings and clusterrolebindings, with upstream's escalation
// prevention (pkg/registry/rbac/*/policybased): a user may write a role
// only with the rules they hold (or the escalate verb on it), and a
// binding only to a role whose rules they hold (or the bind verb on it).
// Members of system:masters are exempt.
//
// The four resources share one package (strategies, tables and the
// escalation check differ only in the type).
package rbac
