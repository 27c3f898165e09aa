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

// SyncPodCIDRs keeps spec.podCIDR and spec.podCIDRs in step as
// upstream's conversion through its internal version does (kubernetes
// v1.37 pkg/apis/core/v1/conversion.go, Convert_v1_NodeSpec_To_core_NodeSpec
// and back): the internal type has podCIDRs only, and podCIDR is its first
// entry on the way out. podCIDR alone becomes podCIDRs [podCIDR]; when
// both are set and podCIDR differs from podCIDRs[0], podCIDR wins for
// older clients and podCIDRs becomes [podCIDR]. Upstream converts at
// decoding, so the field manager records both fields.
func SyncPodCIDRs(spec *corev1.NodeSpec) {
	if spec.PodCIDR != "" && (len(spec.PodCIDRs) == 0 || spec.PodCIDRs[0] != spec.PodCIDR) {
		spec.PodCIDRs = []string{spec.PodCIDR}
	}
	if len(spec.PodCIDRs) > 0 {
		spec.PodCIDR = spec.PodCIDRs[0]
	}
}

// SetObjectDefaults_Node applies every default of a Node: its status's,
// then the rounding of its capacity and allocatable resources; and the
// sync of spec.podCIDR and spec.podCIDRs upstream's conversion makes.
func SetObjectDefaults_Node(in *corev1.Node) {
	SyncPodCIDRs(&in.Spec)
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
