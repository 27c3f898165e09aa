// Package node validates node.k8s.io/v1 RuntimeClasses as kube-apiserver
// v1.37 does (kubernetes/kubernetes pkg/apis/node/validation).
package node
