// Package replicationcontroller serves core/v1 replicationcontrollers
// (short name "rc", category "all") and their status and scale
// subresources, as kube-apiserver does: metadata.generation starts at 1
// and grows with each spec change, the status is cleared on create, kept
// by updates of the main resource and changed only through /status;
// /scale reads and writes spec.replicas as an autoscaling/v1 Scale; a
// delete through core/v1 orphans the controller's pods unless the request
// asks otherwise (upstream's default garbage collection policy for v1).
// Tables show kubectl's NAME DESIRED CURRENT READY AGE and, with -o wide,
// CONTAINERS IMAGES SELECTOR.
//
// No replication manager runs behind kapi: no pod is created and the
// status stays as its writers leave it.
package replicationcontroller
