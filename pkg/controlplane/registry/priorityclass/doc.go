// Package priorityclass is the storage of scheduling.k8s.io/v1 PriorityClasses (cluster-scoped), with
// upstream's strategy and storage (pkg/registry/scheduling/priorityclass):
// names starting "system-" are reserved to the system classes, value and
// preemptionPolicy are immutable, and the system classes cannot be
// deleted.
package priorityclass
