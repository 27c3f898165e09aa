// Package rbac validates rbac.authorization.k8s.io/v1 objects as upstream's
// pkg/apis/rbac/validation: rules need verbs, and either API groups and
// resources or (cluster roles only) non-resource URLs; a roleRef names a
// Role or ClusterRole of the RBAC group and never changes; subjects are
// users and groups of the RBAC group or service accounts of the core group.
package rbac
