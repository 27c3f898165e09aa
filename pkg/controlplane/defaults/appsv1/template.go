package appsv1

import (
	corev1 "k8s.io/api/core/v1"
)

// defaultPodTemplate defaults a workload's pod template as a pod is.
func defaultPodTemplate(t *corev1.PodTemplateSpec) {
	_ = t // the core/v1 pod defaulting lands with pkg/controlplane/defaults/corev1
}

// defaultClaimTemplate defaults a StatefulSet's volume claim template as a
// PersistentVolumeClaim is.
func defaultClaimTemplate(c *corev1.PersistentVolumeClaim) {
	_ = c // the core/v1 claim defaulting lands with pkg/controlplane/defaults/corev1
}
