// Package lease serves coordination.k8s.io/v1 leases (leader election,
// node heartbeats): durations must be positive and transitions
// non-negative when set.
package lease
