package corev1

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// SetDefaults_ReplicationController takes an empty selector and empty
// labels from the template's labels (copies of them: upstream shares the
// map, which only matters to code changing one after decoding).
func SetDefaults_ReplicationController(obj *corev1.ReplicationController) {
	if obj.Spec.Template == nil || obj.Spec.Template.Labels == nil {
		return
	}
	labels := obj.Spec.Template.Labels
	if len(obj.Spec.Selector) == 0 {
		obj.Spec.Selector = maps.Clone(labels)
	}
	if len(obj.Labels) == 0 {
		obj.Labels = maps.Clone(labels)
	}
}

// SetObjectDefaults_ReplicationController applies every default of a
// ReplicationController: selector and labels, one replica (a +default
// marker upstream), then its pod template's (as a pod template's, see
// [SetObjectDefaults_PodTemplateSpec]).
func SetObjectDefaults_ReplicationController(in *corev1.ReplicationController) {
	SetDefaults_ReplicationController(in)
	if in.Spec.Replicas == nil {
		in.Spec.Replicas = ptr.To[int32](1)
	}
	SetObjectDefaults_PodTemplateSpec(in.Spec.Template)
}

// SetObjectDefaults_ReplicationControllerList defaults each controller of
// a list.
func SetObjectDefaults_ReplicationControllerList(in *corev1.ReplicationControllerList) {
	for i := range in.Items {
		SetObjectDefaults_ReplicationController(&in.Items[i])
	}
}
