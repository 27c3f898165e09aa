package corev1

import (
	corev1 "k8s.io/api/core/v1"
)

// SetDefaults_NodeStatus makes a status that reports a capacity but no
// allocatable resources allocate its whole capacity.
func SetDefaults_NodeStatus(obj *corev1.NodeStatus) {
	if obj.Allocatable == nil && obj.Capacity != nil {
		obj.Allocatable = make(corev1.ResourceList, len(obj.Capacity))
		for name, q := range obj.Capacity {
			obj.Allocatable[name] = q.DeepCopy()
		}
	}
}

// SetObjectDefaults_Node applies every default of a Node: its status's,
// then the rounding of its capacity and allocatable resources.
func SetObjectDefaults_Node(in *corev1.Node) {
	SetDefaults_NodeStatus(&in.Status)
	SetDefaults_ResourceList(&in.Status.Capacity)
	SetDefaults_ResourceList(&in.Status.Allocatable)
}

// SetObjectDefaults_NodeList defaults each node of a list.
func SetObjectDefaults_NodeList(in *corev1.NodeList) {
	for i := range in.Items {
		SetObjectDefaults_Node(&in.Items[i])
	}
}
