// Package noderestriction is the NodeRestriction admission plugin, as
// upstream's plugin/pkg/admission/noderestriction: a node (a user
// system:node:<name> in system:nodes) may create only mirror pods bound to
// itself, delete, evict and update the status of only its own pods, modify
// only its own Node (without changing its taints, its config source or
// labels outside the kubelet's set, never node-restriction.kubernetes.io/
// ones), update only the status of claims, request tokens only for pods
// bound to it, and touch only its own Lease, CSINode, ResourceSlices and
// node CSRs. Other users are not affected.
package noderestriction
