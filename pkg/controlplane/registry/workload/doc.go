// Package workload holds what the registries of the apps/v1 workloads
// (deployments, replicasets, statefulsets, daemonsets) share: the
// containers and images cells of their tables, and their scale
// subresource, served as autoscaling/v1 Scale with upstream's Scale table.
package workload
