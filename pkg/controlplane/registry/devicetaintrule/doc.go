// Package devicetaintrule is the storage of resource.k8s.io/v1
// DeviceTaintRules (cluster-scoped, with /status), with upstream's strategy
// (kubernetes pkg/registry/resource/devicetaintrule): status cleared on
// create and kept on main-resource updates, generation bumped on spec
// changes, the taint's timeAdded defaulted (pkg/api/defaults/resourcev1).
// Upstream's printers have no handler for the kind in the stored sources
// consulted, so tables are the default ones (NAME, CREATED AT).
//
// kapi serves the objects only. Upstream's device taint eviction
// controller (kube-controller-manager) applies each rule's taint to the
// matching devices of ResourceSlices, evicts pods whose allocated devices
// carry a NoExecute taint they do not tolerate, and reports progress in the
// EvictionInProgress condition; the scheduler skips tainted devices. kapi
// runs neither: the rules are stored and served, nothing acts on them.
package devicetaintrule
