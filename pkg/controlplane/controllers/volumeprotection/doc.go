// Package volumeprotection holds kube-controller-manager's two storage
// object in-use protection controllers (kubernetes
// pkg/controller/volume/pvcprotection and pvprotection, v1.37), run
// in-process by the controller manager. They are the other half of the
// StorageObjectInUseProtection admission plugin, which puts the
// kubernetes.io/pvc-protection and kubernetes.io/pv-protection finalizers
// on every new claim and volume; without them a deleted claim or volume
// would stay Terminating for ever.
//
//   - The PVC protection controller removes kubernetes.io/pvc-protection
//     from a deleted claim once no scheduled pod uses it (a pod with
//     spec.nodeName naming it as a persistentVolumeClaim volume, or as a
//     generic ephemeral volume it owns, unless that pod is shut down:
//     deleted with a zero grace period). It adds the finalizer to a claim
//     that lacks it, and keeps the Unused condition of bound claims
//     (PersistentVolumeClaimUnusedSinceTime, beta and on by default in
//     v1.37): True "NoPodsUsingPVC" while no pod that has not terminated
//     references the claim, False "PodUsingPVC" otherwise.
//   - The PV protection controller removes kubernetes.io/pv-protection
//     from a deleted volume unless its status phase is Bound, and adds
//     the finalizer to a volume that lacks it.
//
// As upstream, "no pod uses it" is decided from the pod informer and then
// confirmed by a live list of the namespace's pods (a pod may not have
// reached the informer yet). Upstream batches the live lists of the
// claims queued together in one namespace; kapi lists once per claim
// processed (same answer, more requests under mass deletion).
package volumeprotection
