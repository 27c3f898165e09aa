package podsecurity

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// upstreamCase is one case of an upstream check_<id>_test.go table: the pod
// and the expected ForbiddenReason/ForbiddenDetail are copied as golden data
// from the file named in src (kubernetes/kubernetes,
// staging/src/k8s.io/pod-security-admission/policy/, at the commit given).
type upstreamCase struct {
	src     string
	id      string
	version Version
	pod     *corev1.Pod
	reason  string
	detail  string
}

func sc(f func(s *corev1.SecurityContext)) *corev1.SecurityContext {
	s := &corev1.SecurityContext{}
	f(s)
	return s
}

func seccomp(t corev1.SeccompProfileType) *corev1.SeccompProfile {
	return &corev1.SeccompProfile{Type: t}
}

func upstreamCases() []upstreamCase {
	const (
		hostPortsSrc      = "check_hostPorts_test.go@ab3cf0b2a6dc9476c9fbc327afe925fd322b466e"
		seccompBaseSrc    = "check_seccompProfile_baseline_test.go@ab3cf0b2a6dc9476c9fbc327afe925fd322b466e"
		seLinuxSrc        = "check_seLinuxOptions_test.go@2e0908106e4420a601e50d6edfd41475de87a3e1"
		volumesSrc        = "check_restrictedVolumes_test.go@030880a5dc5449403c6d1f0aa146a7dc21d6c6dc"
		windowsSrc        = "check_windowsHostProcess_test.go@78fc8e44052f699bf598f84b697b41e5a328c9c5"
		capsBaselineSrc   = "check_capabilities_baseline_test.go@04791b4906602ffda5ccf9bc4c84d3329f1d7080"
		procMountSrc      = "check_procMount_baseline_test.go@1dc8b4f20f8cd7581b3175390bcca93dbcd517e5 (procMount1_35baseline)"
		capsRestrictedSrc = "check_capabilities_restricted_test.go@04791b4906602ffda5ccf9bc4c84d3329f1d7080"
		sysctlsSrc        = "check_sysctls_test.go@025f2834a128798cef30018a5e6a6ae82b5ad885"
		runAsNonRootSrc   = "check_runAsNonRoot_test.go@008b3652959ca58af8be3fb5b6ecfe9ae7638282 (runAsNonRoot1_35)"
		runAsUserSrc      = "check_runAsUser_test.go@0e39963bea7bba03be3bfcf41716de1f96812488 (runAsUser1_35)"
		// The newest stored TestHostProbesAndHostLifecycle (calling
		// hostProbesAndHostLifecycleV1Dot34, reason "probe or lifecycle host").
		hostProbesSrc = "check_hostProbesAndhostLifecycle_test.go (hostProbesAndHostLifecycleV1Dot34)"
		// The newest stored TestAppArmorProfile (field-aware
		// appArmorProfile_1_0).
		appArmorSrc      = "check_appArmorProfile_test.go (TestAppArmorProfile, appArmorProfile_1_0)"
		v1_0, v1_19, v31 = 0, 19, 31
	)
	selinux := func(typ, user, role string) *corev1.SecurityContext {
		return &corev1.SecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Type: typ, User: user, Role: role}}
	}
	return []upstreamCase{
		{hostPortsSrc, "hostPorts", LatestVersion(), &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "a", Ports: []corev1.ContainerPort{{HostPort: 0}}},
			{Name: "b", Ports: []corev1.ContainerPort{{HostPort: 0}, {HostPort: 20}}},
		}}}, "hostPort", `container "b" uses hostPort 20`},
		{hostPortsSrc, "hostPorts", LatestVersion(), &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "a", Ports: []corev1.ContainerPort{{HostPort: 0}}},
			{Name: "b", Ports: []corev1.ContainerPort{{HostPort: 0}, {HostPort: 10}, {HostPort: 20}}},
			{Name: "c", Ports: []corev1.ContainerPort{{HostPort: 0}, {HostPort: 10}, {HostPort: 30}}},
		}}}, "hostPort", `containers "b", "c" use hostPorts 10, 20, 30`},

		{seccompBaseSrc, "seccompProfile_baseline", Version{minor: v1_0}, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}},
		}, "seccompProfile", `forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined"`},
		{seccompBaseSrc, "seccompProfile_baseline", Version{minor: v1_0}, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
				"container.seccomp.security.alpha.kubernetes.io/a": "unconfined",
				"container.seccomp.security.alpha.kubernetes.io/b": "unknown",
			}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}, {Name: "c"}}},
		}, "seccompProfile", `forbidden annotations container.seccomp.security.alpha.kubernetes.io/a="unconfined", container.seccomp.security.alpha.kubernetes.io/b="unknown"`},
		{seccompBaseSrc, "seccompProfile_baseline", Version{minor: v1_0}, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
				"seccomp.security.alpha.kubernetes.io/pod":         "unconfined",
				"container.seccomp.security.alpha.kubernetes.io/a": "unconfined",
				"container.seccomp.security.alpha.kubernetes.io/b": "unknown",
			}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}, {Name: "c"}}},
		}, "seccompProfile", `forbidden annotations container.seccomp.security.alpha.kubernetes.io/a="unconfined", container.seccomp.security.alpha.kubernetes.io/b="unknown", seccomp.security.alpha.kubernetes.io/pod="unconfined"`},
		{seccompBaseSrc, "seccompProfile_baseline", Version{minor: v1_19}, &corev1.Pod{Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{SeccompProfile: seccomp(corev1.SeccompProfileTypeUnconfined)},
			Containers:      []corev1.Container{{Name: "a"}},
		}}, "seccompProfile", `pod must not set securityContext.seccompProfile.type to "Unconfined"`},
		{seccompBaseSrc, "seccompProfile_baseline", Version{minor: v1_19}, &corev1.Pod{Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{SeccompProfile: seccomp(corev1.SeccompProfileTypeRuntimeDefault)},
			Containers: []corev1.Container{
				{Name: "a"},
				{Name: "b", SecurityContext: &corev1.SecurityContext{}},
				{Name: "c", SecurityContext: &corev1.SecurityContext{SeccompProfile: seccomp(corev1.SeccompProfileTypeUnconfined)}},
				{Name: "d", SecurityContext: &corev1.SecurityContext{SeccompProfile: seccomp(corev1.SeccompProfileTypeUnconfined)}},
				{Name: "e", SecurityContext: &corev1.SecurityContext{SeccompProfile: seccomp(corev1.SeccompProfileTypeRuntimeDefault)}},
				{Name: "f", SecurityContext: &corev1.SecurityContext{SeccompProfile: seccomp(corev1.SeccompProfileTypeRuntimeDefault)}},
			},
		}}, "seccompProfile", `containers "c", "d" must not set securityContext.seccompProfile.type to "Unconfined"`},
		{seccompBaseSrc, "seccompProfile_baseline", Version{minor: v1_19}, &corev1.Pod{Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{SeccompProfile: seccomp(corev1.SeccompProfileTypeUnconfined)},
			Containers: []corev1.Container{
				{Name: "a"},
				{Name: "c", SecurityContext: &corev1.SecurityContext{SeccompProfile: seccomp(corev1.SeccompProfileTypeUnconfined)}},
				{Name: "d", SecurityContext: &corev1.SecurityContext{SeccompProfile: seccomp(corev1.SeccompProfileTypeUnconfined)}},
			},
		}}, "seccompProfile", `pod and containers "c", "d" must not set securityContext.seccompProfile.type to "Unconfined"`},

		{seLinuxSrc, "seLinuxOptions", Version{minor: v31}, &corev1.Pod{Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Type: "foo", User: "bar", Role: "baz"}},
			Containers: []corev1.Container{
				{Name: "a", SecurityContext: selinux("container_t", "", "")},
				{Name: "b", SecurityContext: selinux("container_init_t", "", "")},
				{Name: "c", SecurityContext: selinux("container_kvm_t", "", "")},
				{Name: "d", SecurityContext: selinux("container_engine_t", "", "")},
				{Name: "e", SecurityContext: selinux("bar", "", "")},
				{Name: "f", SecurityContext: selinux("", "bar", "")},
				{Name: "g", SecurityContext: selinux("", "", "baz")},
			},
		}}, "seLinuxOptions", `pod and containers "e", "f", "g" set forbidden securityContext.seLinuxOptions: types "bar", "foo"; user may not be set; role may not be set`},
		{seLinuxSrc, "seLinuxOptions", Version{minor: v31}, &corev1.Pod{Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{SELinuxOptions: &corev1.SELinuxOptions{}},
			Containers: []corev1.Container{
				{Name: "a", SecurityContext: selinux("container_t", "", "")},
				{Name: "e", SecurityContext: selinux("bar", "", "")},
				{Name: "f", SecurityContext: selinux("", "bar", "")},
				{Name: "g", SecurityContext: selinux("", "", "baz")},
			},
		}}, "seLinuxOptions", `containers "e", "f", "g" set forbidden securityContext.seLinuxOptions: type "bar"; user may not be set; role may not be set`},
		{seLinuxSrc, "seLinuxOptions", Version{minor: v31}, &corev1.Pod{Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Type: "bad"}},
		}}, "seLinuxOptions", `pod set forbidden securityContext.seLinuxOptions: type "bad"`},
		{seLinuxSrc, "seLinuxOptions", Version{minor: v31}, &corev1.Pod{Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{SELinuxOptions: &corev1.SELinuxOptions{User: "bad"}},
		}}, "seLinuxOptions", `pod set forbidden securityContext.seLinuxOptions: user may not be set`},
		{seLinuxSrc, "seLinuxOptions", Version{minor: v31}, &corev1.Pod{Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Role: "bad"}},
		}}, "seLinuxOptions", `pod set forbidden securityContext.seLinuxOptions: role may not be set`},

		{volumesSrc, "restrictedVolumes", LatestVersion(), &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{
			{Name: "a1", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "a2", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{}}},
			{Name: "a3", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{}}},
			{Name: "a4", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{}}},
			{Name: "a5", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}},
			{Name: "a6", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}},
			{Name: "a7", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{}}},
			{Name: "a8", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
			{Name: "a9", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{}}},
			{Name: "b1", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{}}},
			{Name: "b2", VolumeSource: corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{}}},
			{Name: "b3", VolumeSource: corev1.VolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{}}},
			{Name: "b4", VolumeSource: corev1.VolumeSource{GitRepo: &corev1.GitRepoVolumeSource{}}},
			{Name: "b5", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{}}},
			{Name: "b6", VolumeSource: corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{}}},
			{Name: "b7", VolumeSource: corev1.VolumeSource{Glusterfs: &corev1.GlusterfsVolumeSource{}}},
			{Name: "b8", VolumeSource: corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{}}},
			{Name: "b9", VolumeSource: corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{}}},
			{Name: "b10", VolumeSource: corev1.VolumeSource{Cinder: &corev1.CinderVolumeSource{}}},
			{Name: "b11", VolumeSource: corev1.VolumeSource{CephFS: &corev1.CephFSVolumeSource{}}},
			{Name: "b12", VolumeSource: corev1.VolumeSource{Flocker: &corev1.FlockerVolumeSource{}}},
			{Name: "b13", VolumeSource: corev1.VolumeSource{FC: &corev1.FCVolumeSource{}}},
			{Name: "b14", VolumeSource: corev1.VolumeSource{AzureFile: &corev1.AzureFileVolumeSource{}}},
			{Name: "b15", VolumeSource: corev1.VolumeSource{VsphereVolume: &corev1.VsphereVirtualDiskVolumeSource{}}},
			{Name: "b16", VolumeSource: corev1.VolumeSource{Quobyte: &corev1.QuobyteVolumeSource{}}},
			{Name: "b17", VolumeSource: corev1.VolumeSource{AzureDisk: &corev1.AzureDiskVolumeSource{}}},
			{Name: "b18", VolumeSource: corev1.VolumeSource{PhotonPersistentDisk: &corev1.PhotonPersistentDiskVolumeSource{}}},
			{Name: "b19", VolumeSource: corev1.VolumeSource{PortworxVolume: &corev1.PortworxVolumeSource{}}},
			{Name: "b20", VolumeSource: corev1.VolumeSource{ScaleIO: &corev1.ScaleIOVolumeSource{}}},
			{Name: "b21", VolumeSource: corev1.VolumeSource{StorageOS: &corev1.StorageOSVolumeSource{}}},
			{Name: "c1", VolumeSource: corev1.VolumeSource{}},
		}}}, "restricted volume types", `volumes ` +
			`"b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9", "b10", "b11", "b12", "b13", "b14", "b15", "b16", "b17", "b18", "b19", "b20", "b21", "c1"` +
			` use restricted volume types ` +
			`"awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "fc", "flexVolume", "flocker", "gcePersistentDisk", "gitRepo", "glusterfs", ` +
			`"hostPath", "iscsi", "nfs", "photonPersistentDisk", "portworxVolume", "quobyte", "rbd", "scaleIO", "storageos", "unknown", "vsphereVolume"`},

		{windowsSrc, "windowsHostProcess", LatestVersion(), &corev1.Pod{Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: ptr(true)}},
			Containers: []corev1.Container{
				{Name: "a"},
				{Name: "b", SecurityContext: &corev1.SecurityContext{}},
				{Name: "c", SecurityContext: sc(func(s *corev1.SecurityContext) { s.WindowsOptions = &corev1.WindowsSecurityContextOptions{} })},
				{Name: "d", SecurityContext: sc(func(s *corev1.SecurityContext) {
					s.WindowsOptions = &corev1.WindowsSecurityContextOptions{HostProcess: ptr(false)}
				})},
				{Name: "e", SecurityContext: sc(func(s *corev1.SecurityContext) {
					s.WindowsOptions = &corev1.WindowsSecurityContextOptions{HostProcess: ptr(true)}
				})},
				{Name: "f", SecurityContext: sc(func(s *corev1.SecurityContext) {
					s.WindowsOptions = &corev1.WindowsSecurityContextOptions{HostProcess: ptr(true)}
				})},
			},
		}}, "hostProcess", `pod and containers "e", "f" must not set securityContext.windowsOptions.hostProcess=true`},

		{capsBaselineSrc, "capabilities_baseline", LatestVersion(), &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "a", SecurityContext: sc(func(s *corev1.SecurityContext) {
				s.Capabilities = &corev1.Capabilities{Add: []corev1.Capability{"FOO", "BAR"}}
			})},
			{Name: "b", SecurityContext: sc(func(s *corev1.SecurityContext) {
				s.Capabilities = &corev1.Capabilities{Add: []corev1.Capability{"BAR", "BAZ"}}
			})},
		}}}, "non-default capabilities", `containers "a", "b" must not include "BAR", "BAZ", "FOO" in securityContext.capabilities.add`},

		{procMountSrc, "procMount", Version{minor: 35}, &corev1.Pod{Spec: corev1.PodSpec{
			Containers: []corev1.Container{
				{Name: "a"},
				{Name: "b", SecurityContext: &corev1.SecurityContext{}},
				{Name: "c", SecurityContext: &corev1.SecurityContext{ProcMount: ptr(corev1.DefaultProcMount)}},
				{Name: "d", SecurityContext: &corev1.SecurityContext{ProcMount: ptr(corev1.UnmaskedProcMount)}},
				{Name: "e", SecurityContext: &corev1.SecurityContext{ProcMount: ptr(corev1.ProcMountType("other"))}},
			},
			HostUsers: ptr(true),
		}}, "procMount", `containers "d", "e" must not set securityContext.procMount to "Unmasked", "other"`},
		{procMountSrc, "procMount", Version{minor: 35}, &corev1.Pod{Spec: corev1.PodSpec{
			Containers: []corev1.Container{
				{Name: "d", SecurityContext: &corev1.SecurityContext{ProcMount: ptr(corev1.UnmaskedProcMount)}},
				{Name: "e", SecurityContext: &corev1.SecurityContext{ProcMount: ptr(corev1.ProcMountType("other"))}},
			},
			HostUsers: ptr(false),
		}}, "", ""},

		{capsRestrictedSrc, "capabilities_restricted", Version{minor: 22}, &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "a", SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"FOO", "BAR"}}}},
			{Name: "b", SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"BAR", "BAZ"}}}},
			{Name: "c", SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{
				Add: []corev1.Capability{"NET_BIND_SERVICE", "CHOWN"}, Drop: []corev1.Capability{"ALL", "FOO"},
			}}},
		}}}, "unrestricted capabilities", `containers "a", "b" must set securityContext.capabilities.drop=["ALL"]; containers "a", "b", "c" must not include "BAR", "BAZ", "CHOWN", "FOO" in securityContext.capabilities.add`},

		{sysctlsSrc, "sysctls", Version{minor: v1_0}, &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{
			Sysctls: []corev1.Sysctl{{Name: "a"}, {Name: "b"}},
		}}}, "forbidden sysctls", "a, b"},
		{sysctlsSrc, "sysctls", Version{minor: v1_0}, &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{
			Sysctls: []corev1.Sysctl{{Name: "net.ipv4.ip_local_reserved_ports", Value: "1024-4999"}},
		}}}, "forbidden sysctls", "net.ipv4.ip_local_reserved_ports"},
		{sysctlsSrc, "sysctls", Version{minor: 27}, &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{
			Sysctls: []corev1.Sysctl{{Name: "net.ipv4.ip_local_reserved_ports", Value: "1024-4999"}},
		}}}, "", ""},

		{runAsNonRootSrc, "runAsNonRoot", Version{minor: 35}, &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}},
			"runAsNonRoot != true", `pod or container "a" must set securityContext.runAsNonRoot=true`},
		{runAsNonRootSrc, "runAsNonRoot", Version{minor: 35}, &corev1.Pod{Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr(false)}, Containers: []corev1.Container{{Name: "a"}},
		}}, "runAsNonRoot != true", `pod must not set securityContext.runAsNonRoot=false`},
		{runAsNonRootSrc, "runAsNonRoot", Version{minor: 35}, &corev1.Pod{Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr(true)},
			Containers: []corev1.Container{
				{Name: "a"},
				{Name: "b", SecurityContext: &corev1.SecurityContext{}},
				{Name: "c", SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr(false)}},
				{Name: "d", SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr(false)}},
				{Name: "e", SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr(true)}},
				{Name: "f", SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr(true)}},
			},
		}}, "runAsNonRoot != true", `containers "c", "d" must not set securityContext.runAsNonRoot=false`},
		{runAsNonRootSrc, "runAsNonRoot", Version{minor: 35}, &corev1.Pod{Spec: corev1.PodSpec{
			Containers: []corev1.Container{
				{Name: "a"},
				{Name: "b", SecurityContext: &corev1.SecurityContext{}},
				{Name: "d", SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr(true)}},
				{Name: "e", SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr(true)}},
			},
		}}, "runAsNonRoot != true", `pod or containers "a", "b" must set securityContext.runAsNonRoot=true`},
		{runAsNonRootSrc, "runAsNonRoot", Version{minor: 35}, &corev1.Pod{Spec: corev1.PodSpec{HostUsers: ptr(false)}}, "", ""},

		{runAsUserSrc, "runAsUser", Version{minor: 35}, &corev1.Pod{Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr(int64(0))}, Containers: []corev1.Container{{Name: "a"}},
		}}, "runAsUser=0", `pod must not set runAsUser=0`},
		{runAsUserSrc, "runAsUser", Version{minor: 35}, &corev1.Pod{Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr(int64(1000))}, Containers: []corev1.Container{{Name: "a"}},
		}}, "", ""},
		{runAsUserSrc, "runAsUser", Version{minor: 35}, &corev1.Pod{Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr(int64(1000))},
			Containers: []corev1.Container{
				{Name: "a"},
				{Name: "b", SecurityContext: &corev1.SecurityContext{}},
				{Name: "c", SecurityContext: &corev1.SecurityContext{RunAsUser: ptr(int64(0))}},
				{Name: "d", SecurityContext: &corev1.SecurityContext{RunAsUser: ptr(int64(0))}},
				{Name: "e", SecurityContext: &corev1.SecurityContext{RunAsUser: ptr(int64(1))}},
				{Name: "f", SecurityContext: &corev1.SecurityContext{RunAsUser: ptr(int64(1))}},
			},
		}}, "runAsUser=0", `containers "c", "d" must not set runAsUser=0`},
		{runAsUserSrc, "runAsUser", Version{minor: 35}, &corev1.Pod{Spec: corev1.PodSpec{HostUsers: ptr(false)}}, "", ""},
		{runAsUserSrc, "runAsUser", Version{minor: 35}, &corev1.Pod{Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr(int64(0))}, Containers: []corev1.Container{{Name: "a"}}, HostUsers: ptr(true),
		}}, "runAsUser=0", `pod must not set runAsUser=0`},

		{hostProbesSrc, "hostProbesAndHostLifecycle", Version{minor: 34}, &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:           "a",
			LivenessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: "127.0.0.1"}}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Host: "::1"}}},
			StartupProbe:   &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: "localhost"}}},
		}}}}, "probe or lifecycle host", `container "a" uses probe or lifecycle hosts "127.0.0.1", "::1", "localhost"`},
		{hostProbesSrc, "hostProbesAndHostLifecycle", Version{minor: 34}, &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:      "d",
			Lifecycle: &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{TCPSocket: &corev1.TCPSocketAction{Host: "invalid.host"}}},
		}}}}, "probe or lifecycle host", `container "d" uses probe or lifecycle host "invalid.host"`},
		{hostProbesSrc, "hostProbesAndHostLifecycle", Version{minor: 34}, &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "valid"},
			{Name: "invalid1", LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: "a.com"}}}},
			{
				Name:         "invalid2",
				Lifecycle:    &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{TCPSocket: &corev1.TCPSocketAction{Host: "b.com"}}},
				StartupProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: "a.com"}}},
			},
		}}}, "probe or lifecycle host", `containers "invalid1", "invalid2" use probe or lifecycle hosts "a.com", "b.com"`},
		{hostProbesSrc, "hostProbesAndHostLifecycle", Version{minor: 34}, &corev1.Pod{Spec: corev1.PodSpec{InitContainers: []corev1.Container{{
			Name:          "init",
			LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: "invalid.init.host"}}},
		}}}}, "probe or lifecycle host", `container "init" uses probe or lifecycle host "invalid.init.host"`},

		{appArmorSrc, "appArmorProfile", LatestVersion(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			`container.apparmor.security.beta.kubernetes.io/`:  `bogus`,
			`container.apparmor.security.beta.kubernetes.io/a`: ``,
			`container.apparmor.security.beta.kubernetes.io/b`: `runtime/default`,
			`container.apparmor.security.beta.kubernetes.io/c`: `localhost/`,
			`container.apparmor.security.beta.kubernetes.io/d`: `localhost/foo`,
			`container.apparmor.security.beta.kubernetes.io/e`: `unconfined`,
			`container.apparmor.security.beta.kubernetes.io/f`: `unknown`,
		}}}, "forbidden AppArmor profiles", `annotations must not set AppArmor profile type to ` +
			`"container.apparmor.security.beta.kubernetes.io/="bogus"", ` +
			`"container.apparmor.security.beta.kubernetes.io/e="unconfined"", ` +
			`"container.apparmor.security.beta.kubernetes.io/f="unknown""`},
		{appArmorSrc, "appArmorProfile", LatestVersion(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			"container.apparmor.security.beta.kubernetes.io/test": "runtime/default", "env": "prod",
		}}}, "", ""},
	}
}

// TestUpstreamCheckTables runs upstream's check test tables through the
// check with that ID (its function, at the policy version the upstream test
// calls), comparing reason and detail exactly.
func TestUpstreamCheckTables(t *testing.T) {
	for _, tc := range upstreamCases() {
		t.Run(tc.src+"/"+tc.reason+"/"+tc.detail, func(t *testing.T) {
			var c *check
			for i := range checks {
				if checks[i].id == tc.id {
					c = &checks[i]
				}
			}
			if c == nil {
				t.Fatalf("no check %q", tc.id)
			}
			if !tc.version.atLeast(c.minMinor) {
				t.Fatalf("check %s does not exist at %s", tc.id, tc.version)
			}
			r := c.fn(&tc.pod.ObjectMeta, &tc.pod.Spec, tc.version)
			if tc.reason == "" {
				if !r.allowed {
					t.Fatalf("forbidden: %s (%s), want allowed", r.reason, r.detail)
				}
				return
			}
			if r.allowed {
				t.Fatal("allowed, want forbidden")
			}
			if r.reason != tc.reason || r.detail != tc.detail {
				t.Errorf("got\n  %s (%s)\nwant\n  %s (%s)", r.reason, r.detail, tc.reason, tc.detail)
			}
		})
	}
}

// TestUpstreamRegistry checks the versioned registration of upstream's
// checks (policy/registry.go and each check's Versions and
// OverrideCheckIDs): which variant runs at which policy version, which
// baseline checks a restricted check replaces, and the order of reasons
// (baseline IDs sorted, then restricted IDs sorted).
func TestUpstreamRegistry(t *testing.T) {
	eval := func(lv LevelVersion, p *corev1.Pod) string { return reasons(evaluate(lv, &p.ObjectMeta, &p.Spec)) }
	rl := func(minor int) LevelVersion { return LevelVersion{LevelRestricted, Version{minor: minor}} }
	bl := func(minor int) LevelVersion { return LevelVersion{LevelBaseline, Version{minor: minor}} }
	latestR, latestB := LevelVersion{LevelRestricted, LatestVersion()}, LevelVersion{LevelBaseline, LatestVersion()}

	// capabilities_restricted (v1.22+) overrides capabilities_baseline.
	caps := restrictedPod()
	csc(caps).Capabilities.Add = []corev1.Capability{"SYS_ADMIN"}
	for _, tc := range []struct {
		lv   LevelVersion
		want string
	}{
		{latestR, "unrestricted capabilities"},
		{rl(22), "unrestricted capabilities"},
		{rl(21), "non-default capabilities"},
		{latestB, "non-default capabilities"},
	} {
		if got := eval(tc.lv, caps); got != tc.want {
			t.Errorf("added SYS_ADMIN at %s: %q, want %q", tc.lv, got, tc.want)
		}
	}

	// procMount_restricted (v1.35+) replaces the baseline procMount check
	// in restricted, so its reason moves among the restricted ones.
	pm := restrictedPod()
	csc(pm).Privileged = ptr(true)
	csc(pm).ProcMount = ptr(corev1.UnmaskedProcMount)
	csc(pm).Capabilities = nil
	if got, want := eval(rl(34), pm), "privileged, procMount, unrestricted capabilities"; got != want {
		t.Errorf("restricted:v1.34 order %q, want %q", got, want)
	}
	if got, want := eval(latestR, pm), "privileged, unrestricted capabilities, procMount"; got != want {
		t.Errorf("restricted:latest order %q, want %q", got, want)
	}

	// Safe sysctls by version (check_sysctls.go: v1.0, 1.27, 1.29, 1.32,
	// 1.37).
	for _, tc := range []struct {
		name  string
		minor int
	}{
		{"net.ipv4.ip_local_reserved_ports", 27}, {"net.ipv4.tcp_keepalive_time", 29}, {"net.ipv4.tcp_fin_timeout", 29},
		{"net.ipv4.tcp_keepalive_intvl", 29}, {"net.ipv4.tcp_keepalive_probes", 29}, {"net.ipv4.tcp_rmem", 32},
		{"net.ipv4.tcp_wmem", 32}, {"net.ipv4.tcp_slow_start_after_idle", 37}, {"net.ipv4.tcp_notsent_lowat", 37},
	} {
		p := restrictedPod()
		p.Spec.SecurityContext.Sysctls = []corev1.Sysctl{{Name: tc.name, Value: "1"}}
		if got := eval(bl(tc.minor-1), p); got != "forbidden sysctls" {
			t.Errorf("%s at v1.%d: %q, want forbidden", tc.name, tc.minor-1, got)
		}
		if got := eval(bl(tc.minor), p) + eval(latestB, p); got != "" {
			t.Errorf("%s at v1.%d/latest: %q, want allowed", tc.name, tc.minor, got)
		}
	}

	// seccompProfile_baseline reads the alpha annotations before v1.19 and
	// the fields from v1.19.
	sa := restrictedPod()
	sa.Spec.SecurityContext.SeccompProfile = seccomp(corev1.SeccompProfileTypeUnconfined)
	sa.Annotations = map[string]string{"seccomp.security.alpha.kubernetes.io/pod": "unconfined", "container.seccomp.security.alpha.kubernetes.io/c": "docker/default"}
	if got := message(evaluate(bl(18), &sa.ObjectMeta, &sa.Spec)); got != `seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")` {
		t.Errorf("baseline:v1.18 seccomp: %s", got)
	}
	delete(sa.Annotations, "seccomp.security.alpha.kubernetes.io/pod")
	if got := eval(bl(18), sa); got != "" {
		t.Errorf("baseline:v1.18 ignores the seccompProfile field and allows docker/default: %q", got)
	}
	if got := eval(bl(19), sa); got != "seccompProfile" {
		t.Errorf("baseline:v1.19 seccomp field: %q", got)
	}

	// hostPorts are a set sorted as strings (sets.String.List upstream).
	hp := restrictedPod()
	hp.Spec.Containers[0].Ports = []corev1.ContainerPort{{HostPort: 80}, {HostPort: 10000}, {HostPort: 80}}
	if got := message(evaluate(latestB, &hp.ObjectMeta, &hp.Spec)); got != `hostPort (container "c" uses hostPorts 10000, 80)` {
		t.Errorf("hostPorts: %s", got)
	}
}
