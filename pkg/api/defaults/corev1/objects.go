package corev1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// RegisterDefaults registers the covering defaulters of core/v1 Pod,
// PodList, PodTemplate and PodTemplateList on s, as upstream's generated
// RegisterDefaults does for them.
func RegisterDefaults(s *runtime.Scheme) error {
	s.AddTypeDefaultingFunc(&corev1.Pod{}, func(obj any) { SetObjectDefaults_Pod(obj.(*corev1.Pod)) })
	s.AddTypeDefaultingFunc(&corev1.PodList{}, func(obj any) { SetObjectDefaults_PodList(obj.(*corev1.PodList)) })
	s.AddTypeDefaultingFunc(&corev1.PodTemplate{}, func(obj any) { SetObjectDefaults_PodTemplate(obj.(*corev1.PodTemplate)) })
	s.AddTypeDefaultingFunc(&corev1.PodTemplateList{}, func(obj any) { SetObjectDefaults_PodTemplateList(obj.(*corev1.PodTemplateList)) })
	return nil
}

// SetObjectDefaults_Pod applies every default of a Pod: the pod-only ones
// ([SetDefaults_Pod]), then those of its spec and status.
func SetObjectDefaults_Pod(in *corev1.Pod) {
	SetDefaults_Pod(in)
	SetObjectDefaults_PodSpec(&in.Spec)
	setObjectDefaultsPodStatus(&in.Status)
}

// SetObjectDefaults_PodList defaults each pod of a list.
func SetObjectDefaults_PodList(in *corev1.PodList) {
	for i := range in.Items {
		SetObjectDefaults_Pod(&in.Items[i])
	}
}

// SetObjectDefaults_PodTemplate defaults a PodTemplate's template.
func SetObjectDefaults_PodTemplate(in *corev1.PodTemplate) {
	SetObjectDefaults_PodTemplateSpec(&in.Template)
}

// SetObjectDefaults_PodTemplateList defaults each template of a list.
func SetObjectDefaults_PodTemplateList(in *corev1.PodTemplateList) {
	for i := range in.Items {
		SetObjectDefaults_PodTemplate(&in.Items[i])
	}
}

// SetObjectDefaults_PodTemplateSpec applies every default of a pod
// template: those of its spec, without the pod-only ones of
// [SetDefaults_Pod]. It is what upstream's generated defaulters do for the
// template embedded in a PodTemplate, ReplicationController, Deployment,
// ReplicaSet, StatefulSet, DaemonSet, Job or CronJob; a nil template is
// left alone.
func SetObjectDefaults_PodTemplateSpec(in *corev1.PodTemplateSpec) {
	if in == nil {
		return
	}
	SetObjectDefaults_PodSpec(&in.Spec)
}

// SetObjectDefaults_PodSpec applies every default of a pod spec and what
// it contains (volumes, containers, init and ephemeral containers,
// overhead and pod-level resources), in upstream's order.
func SetObjectDefaults_PodSpec(in *corev1.PodSpec) {
	SetDefaults_PodSpec(in)
	for i := range in.Volumes {
		setObjectDefaultsVolume(&in.Volumes[i])
	}
	for i := range in.InitContainers {
		setObjectDefaultsContainer(&in.InitContainers[i])
	}
	for i := range in.Containers {
		setObjectDefaultsContainer(&in.Containers[i])
	}
	for i := range in.EphemeralContainers {
		c := &in.EphemeralContainers[i]
		SetDefaults_EphemeralContainer(c)
		setObjectDefaultsContainerFields((*corev1.Container)(&c.EphemeralContainerCommon))
	}
	SetDefaults_ResourceList(&in.Overhead)
	if in.Resources != nil {
		SetDefaults_ResourceList(&in.Resources.Limits)
		SetDefaults_ResourceList(&in.Resources.Requests)
	}
}

// setObjectDefaultsVolume defaults a volume and its source.
func setObjectDefaultsVolume(v *corev1.Volume) {
	SetDefaults_Volume(v)
	s := &v.VolumeSource
	if s.HostPath != nil {
		SetDefaults_HostPathVolumeSource(s.HostPath)
	}
	if s.Secret != nil {
		SetDefaults_SecretVolumeSource(s.Secret)
	}
	if s.ISCSI != nil {
		SetDefaults_ISCSIVolumeSource(s.ISCSI)
	}
	if s.RBD != nil {
		SetDefaults_RBDVolumeSource(s.RBD)
	}
	if s.DownwardAPI != nil {
		SetDefaults_DownwardAPIVolumeSource(s.DownwardAPI)
		defaultDownwardAPIFiles(s.DownwardAPI.Items)
	}
	if s.ConfigMap != nil {
		SetDefaults_ConfigMapVolumeSource(s.ConfigMap)
	}
	if s.AzureDisk != nil {
		SetDefaults_AzureDiskVolumeSource(s.AzureDisk)
	}
	if s.Projected != nil {
		SetDefaults_ProjectedVolumeSource(s.Projected)
		for j := range s.Projected.Sources {
			p := &s.Projected.Sources[j]
			if p.DownwardAPI != nil {
				defaultDownwardAPIFiles(p.DownwardAPI.Items)
			}
			if p.ServiceAccountToken != nil {
				SetDefaults_ServiceAccountTokenProjection(p.ServiceAccountToken)
			}
		}
	}
	if s.ScaleIO != nil {
		SetDefaults_ScaleIOVolumeSource(s.ScaleIO)
	}
	if s.Ephemeral != nil && s.Ephemeral.VolumeClaimTemplate != nil {
		spec := &s.Ephemeral.VolumeClaimTemplate.Spec
		SetDefaults_PersistentVolumeClaimSpec(spec)
		SetDefaults_ResourceList(&spec.Resources.Limits)
		SetDefaults_ResourceList(&spec.Resources.Requests)
	}
}

func defaultDownwardAPIFiles(items []corev1.DownwardAPIVolumeFile) {
	for i := range items {
		if items[i].FieldRef != nil {
			SetDefaults_ObjectFieldSelector(items[i].FieldRef)
		}
	}
}

// setObjectDefaultsContainer defaults a container and what it contains.
func setObjectDefaultsContainer(c *corev1.Container) {
	SetDefaults_Container(c)
	setObjectDefaultsContainerFields(c)
}

// setObjectDefaultsContainerFields defaults what a container contains:
// port protocols, env sources, resource lists, probes and lifecycle
// handlers.
func setObjectDefaultsContainerFields(c *corev1.Container) {
	for j := range c.Ports {
		if c.Ports[j].Protocol == "" {
			c.Ports[j].Protocol = corev1.ProtocolTCP
		}
	}
	for j := range c.Env {
		from := c.Env[j].ValueFrom
		if from == nil {
			continue
		}
		if from.FieldRef != nil {
			SetDefaults_ObjectFieldSelector(from.FieldRef)
		}
		// +default=false on FileKeySelector.optional.
		if from.FileKeyRef != nil && from.FileKeyRef.Optional == nil {
			from.FileKeyRef.Optional = ptr.To(false)
		}
	}
	SetDefaults_ResourceList(&c.Resources.Limits)
	SetDefaults_ResourceList(&c.Resources.Requests)
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		if p == nil {
			continue
		}
		SetDefaults_Probe(p)
		if p.HTTPGet != nil {
			SetDefaults_HTTPGetAction(p.HTTPGet)
		}
		// +default="" on GRPCAction.service.
		if p.GRPC != nil && p.GRPC.Service == nil {
			p.GRPC.Service = ptr.To("")
		}
	}
	if l := c.Lifecycle; l != nil {
		if l.PostStart != nil && l.PostStart.HTTPGet != nil {
			SetDefaults_HTTPGetAction(l.PostStart.HTTPGet)
		}
		if l.PreStop != nil && l.PreStop.HTTPGet != nil {
			SetDefaults_HTTPGetAction(l.PreStop.HTTPGet)
		}
	}
}

// setObjectDefaultsPodStatus rounds the resource lists of a pod status.
func setObjectDefaultsPodStatus(s *corev1.PodStatus) {
	SetDefaults_PodStatus(s)
	for _, list := range [][]corev1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses, s.EphemeralContainerStatuses} {
		for i := range list {
			cs := &list[i]
			SetDefaults_ResourceList(&cs.AllocatedResources)
			if cs.Resources != nil {
				SetDefaults_ResourceList(&cs.Resources.Limits)
				SetDefaults_ResourceList(&cs.Resources.Requests)
			}
		}
	}
	SetDefaults_ResourceList(&s.AllocatedResources)
	if s.Resources != nil {
		SetDefaults_ResourceList(&s.Resources.Limits)
		SetDefaults_ResourceList(&s.Resources.Requests)
	}
}
