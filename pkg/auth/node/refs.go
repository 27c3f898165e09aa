package node

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// podReferences lists what a bound pod references: the secrets and
// configmaps of upstream's podutil.VisitPodSecretNames and
// VisitPodConfigmapNames (image pull secrets, every container's env and
// envFrom, the volumes), its persistent volume claims (generic ephemeral
// volumes' claims are named <pod>-<volume>), its service account and its
// resource claims (named in the spec or generated, from the status).
func podReferences(p *corev1.Pod) *podRefs {
	r := &podRefs{node: p.Spec.NodeName, serviceAccount: p.Spec.ServiceAccountName}
	add := func(list *[]string, name string) {
		if name != "" && !slices.Contains(*list, name) {
			*list = append(*list, name)
		}
	}
	for _, s := range p.Spec.ImagePullSecrets {
		add(&r.secrets, s.Name)
	}
	visitEnv := func(envFrom []corev1.EnvFromSource, env []corev1.EnvVar) {
		for _, e := range envFrom {
			if e.SecretRef != nil {
				add(&r.secrets, e.SecretRef.Name)
			}
			if e.ConfigMapRef != nil {
				add(&r.configMaps, e.ConfigMapRef.Name)
			}
		}
		for _, e := range env {
			if e.ValueFrom == nil {
				continue
			}
			if e.ValueFrom.SecretKeyRef != nil {
				add(&r.secrets, e.ValueFrom.SecretKeyRef.Name)
			}
			if e.ValueFrom.ConfigMapKeyRef != nil {
				add(&r.configMaps, e.ValueFrom.ConfigMapKeyRef.Name)
			}
		}
	}
	for _, c := range p.Spec.InitContainers {
		visitEnv(c.EnvFrom, c.Env)
	}
	for _, c := range p.Spec.Containers {
		visitEnv(c.EnvFrom, c.Env)
	}
	for _, c := range p.Spec.EphemeralContainers {
		visitEnv(c.EnvFrom, c.Env)
	}
	for _, v := range p.Spec.Volumes {
		visitVolumeSecrets(v.VolumeSource, func(name string) { add(&r.secrets, name) })
		switch {
		case v.ConfigMap != nil:
			add(&r.configMaps, v.ConfigMap.Name)
		case v.Projected != nil:
			for _, src := range v.Projected.Sources {
				if src.ConfigMap != nil {
					add(&r.configMaps, src.ConfigMap.Name)
				}
			}
		case v.PersistentVolumeClaim != nil:
			add(&r.claims, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			add(&r.claims, p.Name+"-"+v.Name)
		}
	}
	for _, c := range p.Spec.ResourceClaims {
		if c.ResourceClaimName != nil {
			add(&r.resourceClaims, *c.ResourceClaimName)
		}
	}
	for _, s := range p.Status.ResourceClaimStatuses {
		if s.ResourceClaimName != nil {
			add(&r.resourceClaims, *s.ResourceClaimName)
		}
	}
	if s := p.Status.ExtendedResourceClaimStatus; s != nil {
		add(&r.resourceClaims, s.ResourceClaimName)
	}
	return r
}

// visitVolumeSecrets calls visit with each secret a pod volume names
// (same namespace as the pod).
func visitVolumeSecrets(v corev1.VolumeSource, visit func(string)) {
	switch {
	case v.AzureFile != nil:
		visit(v.AzureFile.SecretName)
	case v.CephFS != nil && v.CephFS.SecretRef != nil:
		visit(v.CephFS.SecretRef.Name)
	case v.Cinder != nil && v.Cinder.SecretRef != nil:
		visit(v.Cinder.SecretRef.Name)
	case v.FlexVolume != nil && v.FlexVolume.SecretRef != nil:
		visit(v.FlexVolume.SecretRef.Name)
	case v.Projected != nil:
		for _, src := range v.Projected.Sources {
			if src.Secret != nil {
				visit(src.Secret.Name)
			}
		}
	case v.RBD != nil && v.RBD.SecretRef != nil:
		visit(v.RBD.SecretRef.Name)
	case v.Secret != nil:
		visit(v.Secret.SecretName)
	case v.ScaleIO != nil && v.ScaleIO.SecretRef != nil:
		visit(v.ScaleIO.SecretRef.Name)
	case v.ISCSI != nil && v.ISCSI.SecretRef != nil:
		visit(v.ISCSI.SecretRef.Name)
	case v.StorageOS != nil && v.StorageOS.SecretRef != nil:
		visit(v.StorageOS.SecretRef.Name)
	case v.CSI != nil && v.CSI.NodePublishSecretRef != nil:
		visit(v.CSI.NodePublishSecretRef.Name)
	}
}

// pvSecrets lists the secrets a persistent volume names, as upstream's
// VisitPVSecretNames: a reference without a namespace is in the claim's
// namespace (azureFile, cephfs, flexVolume, rbd, scaleIO, iscsi), or
// "default" for storageOS's object reference.
func pvSecrets(pv *corev1.PersistentVolume) []key {
	claimNS := ""
	if pv.Spec.ClaimRef != nil {
		claimNS = pv.Spec.ClaimRef.Namespace
	}
	var out []key
	add := func(ns, name string) {
		if name == "" {
			return
		}
		if ns == "" {
			ns = claimNS
		}
		if k := (key{ns, name}); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	s := pv.Spec.PersistentVolumeSource
	switch {
	case s.AzureFile != nil:
		ns := ""
		if s.AzureFile.SecretNamespace != nil {
			ns = *s.AzureFile.SecretNamespace
		}
		add(ns, s.AzureFile.SecretName)
	case s.CephFS != nil && s.CephFS.SecretRef != nil:
		add(s.CephFS.SecretRef.Namespace, s.CephFS.SecretRef.Name)
	case s.Cinder != nil && s.Cinder.SecretRef != nil:
		add(s.Cinder.SecretRef.Namespace, s.Cinder.SecretRef.Name)
	case s.FlexVolume != nil && s.FlexVolume.SecretRef != nil:
		add(s.FlexVolume.SecretRef.Namespace, s.FlexVolume.SecretRef.Name)
	case s.RBD != nil && s.RBD.SecretRef != nil:
		add(s.RBD.SecretRef.Namespace, s.RBD.SecretRef.Name)
	case s.ScaleIO != nil && s.ScaleIO.SecretRef != nil:
		add(s.ScaleIO.SecretRef.Namespace, s.ScaleIO.SecretRef.Name)
	case s.ISCSI != nil && s.ISCSI.SecretRef != nil:
		add(s.ISCSI.SecretRef.Namespace, s.ISCSI.SecretRef.Name)
	case s.StorageOS != nil && s.StorageOS.SecretRef != nil:
		ns := s.StorageOS.SecretRef.Namespace
		if ns == "" {
			ns = "default"
		}
		add(ns, s.StorageOS.SecretRef.Name)
	case s.CSI != nil:
		for _, r := range []*corev1.SecretReference{s.CSI.ControllerPublishSecretRef, s.CSI.NodeStageSecretRef,
			s.CSI.NodePublishSecretRef, s.CSI.ControllerExpandSecretRef, s.CSI.NodeExpandSecretRef} {
			if r != nil {
				add(r.Namespace, r.Name)
			}
		}
	}
	return out
}

// PodSecretsAndConfigMaps lists the secrets and configmaps a pod
// references (for NodeRestriction, which refuses mirror pods that
// reference any).
func PodSecretsAndConfigMaps(p *corev1.Pod) (secrets, configMaps []string) {
	r := podReferences(p)
	return r.secrets, r.configMaps
}
