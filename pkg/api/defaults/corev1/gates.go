package corev1

import (
	corev1 "k8s.io/api/core/v1"
)

// The pod fields of features whose gates are off by default in
// kube-apiserver v1.37.2. kapi has no feature gates and serves every gate
// at its default, so, as upstream's DropDisabledPodFields and
// DropDisabledTemplateFields (k8s.io/kubernetes pkg/api/pod/util.go) do
// with the default gates, a field of such a feature is dropped from a new
// object, and from an update unless the stored object already uses it
// (anywhere in its spec: the "in use" rule is per feature, not per field).
//
// Gates off by default in v1.37.2 that these drops stand for:
// ContainerStopSignals (alpha), H2CContainerProbe (alpha),
// GRPCContainerProbeTLS (alpha), AtomicWriteVolumeUserFields (alpha),
// EvictionRequestAPI (alpha) and GenericWorkload (beta, off).

// DropDisabledPodSpecFields drops from spec the fields of the features
// that are off by default and that old (nil on create) does not use.
func DropDisabledPodSpecFields(spec, old *corev1.PodSpec) {
	if spec == nil {
		return
	}
	if !stopSignalsInUse(old) {
		dropStopSignals(spec)
	}
	if !httpProbeProtocolInUse(old) {
		dropHTTPProbeProtocol(spec)
	}
	if !grpcProbeModeInUse(old) {
		dropGRPCProbeMode(spec)
	}
	if !volumeUserFieldsInUse(old) {
		dropVolumeUserFields(spec)
	}
	if old == nil || len(old.EvictionResponders) == 0 {
		spec.EvictionResponders = nil
	}
	if old == nil || old.SchedulingGroup == nil {
		spec.SchedulingGroup = nil
	}
}

// DropDisabledTemplateFields is DropDisabledPodSpecFields for a pod
// template of a workload or a PodTemplate (old is nil on create).
func DropDisabledTemplateFields(t, old *corev1.PodTemplateSpec) {
	if t == nil {
		return
	}
	var oldSpec *corev1.PodSpec
	if old != nil {
		oldSpec = &old.Spec
	}
	DropDisabledPodSpecFields(&t.Spec, oldSpec)
}

// containerParts are the parts of a container, init container or
// ephemeral container the drops look at.
type containerParts struct {
	lifecycle **corev1.Lifecycle
	probes    []*corev1.Probe
}

// eachContainer calls f with every container of spec (init, regular and
// ephemeral, as upstream's VisitContainers with AllContainers) until f
// returns false.
func eachContainer(spec *corev1.PodSpec, f func(containerParts) bool) {
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if !f(containerParts{&c.Lifecycle, []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe}}) {
			return
		}
	}
	for i := range spec.Containers {
		c := &spec.Containers[i]
		if !f(containerParts{&c.Lifecycle, []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe}}) {
			return
		}
	}
	for i := range spec.EphemeralContainers {
		c := &spec.EphemeralContainers[i].EphemeralContainerCommon
		if !f(containerParts{&c.Lifecycle, []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe}}) {
			return
		}
	}
}

// anyContainer reports whether pred holds for a container of spec (false
// for a nil spec).
func anyContainer(spec *corev1.PodSpec, pred func(containerParts) bool) bool {
	if spec == nil {
		return false
	}
	found := false
	eachContainer(spec, func(c containerParts) bool {
		found = pred(c)
		return !found
	})
	return found
}

// ContainerStopSignals: lifecycle.stopSignal, and the lifecycle itself when
// nothing else is left in it.
func stopSignalsInUse(spec *corev1.PodSpec) bool {
	return anyContainer(spec, func(c containerParts) bool {
		return *c.lifecycle != nil && (*c.lifecycle).StopSignal != nil
	})
}

func dropStopSignals(spec *corev1.PodSpec) {
	eachContainer(spec, func(c containerParts) bool {
		l := *c.lifecycle
		if l != nil && l.StopSignal != nil {
			l.StopSignal = nil
			if l.PostStart == nil && l.PreStop == nil {
				*c.lifecycle = nil
			}
		}
		return true
	})
}

// H2CContainerProbe: httpGet.protocol of the probes and the lifecycle
// handlers.
func lifecycleHandlers(l *corev1.Lifecycle) []*corev1.LifecycleHandler {
	if l == nil {
		return nil
	}
	return []*corev1.LifecycleHandler{l.PostStart, l.PreStop}
}

func httpProbeProtocolInUse(spec *corev1.PodSpec) bool {
	return anyContainer(spec, func(c containerParts) bool {
		for _, p := range c.probes {
			if p != nil && p.HTTPGet != nil && p.HTTPGet.Protocol != nil {
				return true
			}
		}
		for _, h := range lifecycleHandlers(*c.lifecycle) {
			if h != nil && h.HTTPGet != nil && h.HTTPGet.Protocol != nil {
				return true
			}
		}
		return false
	})
}

func dropHTTPProbeProtocol(spec *corev1.PodSpec) {
	eachContainer(spec, func(c containerParts) bool {
		for _, p := range c.probes {
			if p != nil && p.HTTPGet != nil {
				p.HTTPGet.Protocol = nil
			}
		}
		for _, h := range lifecycleHandlers(*c.lifecycle) {
			if h != nil && h.HTTPGet != nil {
				h.HTTPGet.Protocol = nil
			}
		}
		return true
	})
}

// GRPCContainerProbeTLS: grpc.mode of the probes (any value, Plaintext
// included, counts as in use).
func grpcProbeModeInUse(spec *corev1.PodSpec) bool {
	return anyContainer(spec, func(c containerParts) bool {
		for _, p := range c.probes {
			if p != nil && p.GRPC != nil && p.GRPC.Mode != nil {
				return true
			}
		}
		return false
	})
}

func dropGRPCProbeMode(spec *corev1.PodSpec) {
	eachContainer(spec, func(c containerParts) bool {
		for _, p := range c.probes {
			if p != nil && p.GRPC != nil {
				p.GRPC.Mode = nil
			}
		}
		return true
	})
}

// AtomicWriteVolumeUserFields: defaultUser of the secret, configMap,
// downwardAPI and projected volumes, and user of their items, of the
// projected service account token, cluster trust bundle and pod
// certificate sources.
func volumeUserFieldsInUse(spec *corev1.PodSpec) bool {
	if spec == nil {
		return false
	}
	for i := range spec.Volumes {
		v := &spec.Volumes[i].VolumeSource
		switch {
		case v.Secret != nil:
			if v.Secret.DefaultUser != nil || keyToPathsUseUser(v.Secret.Items) {
				return true
			}
		case v.ConfigMap != nil:
			if v.ConfigMap.DefaultUser != nil || keyToPathsUseUser(v.ConfigMap.Items) {
				return true
			}
		case v.DownwardAPI != nil:
			if v.DownwardAPI.DefaultUser != nil || downwardAPIFilesUseUser(v.DownwardAPI.Items) {
				return true
			}
		case v.Projected != nil:
			if v.Projected.DefaultUser != nil {
				return true
			}
			for j := range v.Projected.Sources {
				s := &v.Projected.Sources[j]
				switch {
				case s.Secret != nil:
					if keyToPathsUseUser(s.Secret.Items) {
						return true
					}
				case s.DownwardAPI != nil:
					if downwardAPIFilesUseUser(s.DownwardAPI.Items) {
						return true
					}
				case s.ConfigMap != nil:
					if keyToPathsUseUser(s.ConfigMap.Items) {
						return true
					}
				case s.ServiceAccountToken != nil:
					if s.ServiceAccountToken.User != nil {
						return true
					}
				case s.ClusterTrustBundle != nil:
					if s.ClusterTrustBundle.User != nil {
						return true
					}
				case s.PodCertificate != nil:
					if s.PodCertificate.User != nil {
						return true
					}
				}
			}
		}
	}
	return false
}

func keyToPathsUseUser(items []corev1.KeyToPath) bool {
	for i := range items {
		if items[i].User != nil {
			return true
		}
	}
	return false
}

func downwardAPIFilesUseUser(items []corev1.DownwardAPIVolumeFile) bool {
	for i := range items {
		if items[i].User != nil {
			return true
		}
	}
	return false
}

func dropVolumeUserFields(spec *corev1.PodSpec) {
	for i := range spec.Volumes {
		v := &spec.Volumes[i].VolumeSource
		switch {
		case v.Secret != nil:
			v.Secret.DefaultUser = nil
			dropKeyToPathUsers(v.Secret.Items)
		case v.ConfigMap != nil:
			v.ConfigMap.DefaultUser = nil
			dropKeyToPathUsers(v.ConfigMap.Items)
		case v.DownwardAPI != nil:
			v.DownwardAPI.DefaultUser = nil
			dropDownwardAPIFileUsers(v.DownwardAPI.Items)
		case v.Projected != nil:
			v.Projected.DefaultUser = nil
			for j := range v.Projected.Sources {
				s := &v.Projected.Sources[j]
				switch {
				case s.Secret != nil:
					dropKeyToPathUsers(s.Secret.Items)
				case s.DownwardAPI != nil:
					dropDownwardAPIFileUsers(s.DownwardAPI.Items)
				case s.ConfigMap != nil:
					dropKeyToPathUsers(s.ConfigMap.Items)
				case s.ServiceAccountToken != nil:
					s.ServiceAccountToken.User = nil
				case s.ClusterTrustBundle != nil:
					s.ClusterTrustBundle.User = nil
				case s.PodCertificate != nil:
					s.PodCertificate.User = nil
				}
			}
		}
	}
}

func dropKeyToPathUsers(items []corev1.KeyToPath) {
	for i := range items {
		items[i].User = nil
	}
}

func dropDownwardAPIFileUsers(items []corev1.DownwardAPIVolumeFile) {
	for i := range items {
		items[i].User = nil
	}
}
