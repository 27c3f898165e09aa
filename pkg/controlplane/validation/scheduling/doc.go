// Package scheduling validates scheduling.k8s.io/v1 PriorityClasses as
// kube-apiserver v1.37 does (kubernetes/kubernetes
// pkg/apis/scheduling/validation), and holds the system priority classes
// every cluster has (pkg/apis/scheduling/v1 helpers).
package scheduling
