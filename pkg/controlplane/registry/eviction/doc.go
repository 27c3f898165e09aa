// Package eviction is the pods/eviction subresource: a POST of a
// policy/v1 Eviction deletes a pod unless that would violate the pod's
// PodDisruptionBudget, as upstream's eviction REST
// (pkg/registry/core/pod/storage/eviction.go, v1.37) decides:
//
//   - a pod that is terminal (Succeeded, Failed), Pending or already being
//     deleted is deleted without looking at budgets;
//   - a pod matched by more than one budget is refused (500);
//   - an unready pod is deleted without consuming the budget when the
//     budget's unhealthyPodEvictionPolicy is AlwaysAllow, or when the
//     budget has all the healthy pods it wants;
//   - otherwise the budget must have been observed by its controller
//     (status.observedGeneration), and status.disruptionsAllowed is
//     decremented and the pod recorded in status.disruptedPods before the
//     pod is deleted; with none allowed the answer is 429 TooManyRequests
//     "Cannot evict pod as it would violate the pod's disruption budget.";
//   - the deleted pod first gets the DisruptionTarget condition; dry-run
//     (of the request or of the Eviction's deleteOptions) changes nothing.
//
// kapi runs no disruption controller: budgets' status is what clients
// write, as on a kube-apiserver started alone.
package eviction
