// Package schedulingv1 holds kube-apiserver v1.37's defaulting of
// scheduling.k8s.io/v1 PriorityClasses (kubernetes/kubernetes
// pkg/apis/scheduling/v1/defaults.go), applied by the built-in scheme's
// decoders.
package schedulingv1
