// Package flowcontrol validates flowcontrol.apiserver.k8s.io/v1
// FlowSchemas and PriorityLevelConfigurations with upstream's field paths
// and messages (kubernetes/kubernetes pkg/apis/flowcontrol/validation,
// v1.37).
package flowcontrol
