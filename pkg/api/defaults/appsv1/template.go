package appsv1

import (
	corev1 "k8s.io/api/core/v1"

	defaultscorev1 "github.com/kapi-dev/kapi/pkg/api/defaults/corev1"
)

// defaultPodTemplate defaults a workload's pod template as a pod is (its
// spec; the pod-only defaults do not apply to templates).
func defaultPodTemplate(t *corev1.PodTemplateSpec) {
	defaultscorev1.SetObjectDefaults_PodTemplateSpec(t)
}

// defaultClaimTemplate defaults a StatefulSet's volume claim template as
// upstream's generated SetObjectDefaults_StatefulSet does: the claim (its
// phase Pending, as SetDefaults_PersistentVolumeClaim), its spec
// (volumeMode Filesystem) and the resource lists of spec and status.
func defaultClaimTemplate(c *corev1.PersistentVolumeClaim) {
	if c.Status.Phase == "" {
		c.Status.Phase = corev1.ClaimPending
	}
	defaultscorev1.SetDefaults_PersistentVolumeClaimSpec(&c.Spec)
	defaultscorev1.SetDefaults_ResourceList(&c.Spec.Resources.Limits)
	defaultscorev1.SetDefaults_ResourceList(&c.Spec.Resources.Requests)
	defaultscorev1.SetDefaults_ResourceList(&c.Status.Capacity)
	defaultscorev1.SetDefaults_ResourceList(&c.Status.AllocatedResources)
}
