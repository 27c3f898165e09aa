// Package node is the Node authorizer (--authorization-mode=Node), as
// upstream's plugin/pkg/auth/authorizer/node: a kubelet, identified as
// system:node:<name> in the group system:nodes, may read the secrets,
// configmaps, persistent volume claims and volumes, service account tokens
// and resource claims that the pods bound to its node reference, its own
// Node, Lease and CSINode, and what the static node rules (the system:node
// ClusterRole's) allow. The relationships come from a Graph kept up to
// date by informers; kapi computes a path on demand from per-node
// indexes instead of walking upstream's general graph, with the same
// answers.
package node
