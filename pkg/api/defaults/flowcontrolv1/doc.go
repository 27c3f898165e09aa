// Package flowcontrolv1 holds kube-apiserver's defaulting of
// flowcontrol.apiserver.k8s.io/v1 FlowSchemas and
// PriorityLevelConfigurations (upstream pkg/apis/flowcontrol/v1/defaults.go,
// v1.37), registered on the built-in scheme.
package flowcontrolv1
