package corev1

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// The per-type defaults of the pod spec and what it contains, as upstream's
// pkg/apis/core/v1/defaults.go (kubernetes v1.37) and the +default markers
// of k8s.io/api/core/v1 v0.37. The names are upstream's so that the
// functions can be compared one by one.

// SetDefaults_Pod applies the defaults that only a Pod gets (not a pod
// template): a negative termination grace period becomes 1, container
// requests default to their limits, service links are on, and with host
// networking every container port is also a host port. (Pod-level
// resources are completed when the pod is created: PrepareForCreate.)
func SetDefaults_Pod(obj *corev1.Pod) {
	if t := obj.Spec.TerminationGracePeriodSeconds; t != nil && *t < 0 {
		obj.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1)
	}
	for i := range obj.Spec.Containers {
		defaultRequestsFromLimits(&obj.Spec.Containers[i].Resources)
	}
	for i := range obj.Spec.InitContainers {
		defaultRequestsFromLimits(&obj.Spec.InitContainers[i].Resources)
	}

	if obj.Spec.EnableServiceLinks == nil {
		obj.Spec.EnableServiceLinks = ptr.To(corev1.DefaultEnableServiceLinks)
	}
	if obj.Spec.HostNetwork {
		defaultHostNetworkPorts(obj.Spec.Containers)
		defaultHostNetworkPorts(obj.Spec.InitContainers)
	}
}

// defaultRequestsFromLimits sets each request a container leaves out to
// its limit.
func defaultRequestsFromLimits(r *corev1.ResourceRequirements) {
	if r.Limits == nil {
		return
	}
	if r.Requests == nil {
		r.Requests = make(corev1.ResourceList)
	}
	for name, limit := range r.Limits {
		if _, ok := r.Requests[name]; !ok {
			r.Requests[name] = limit.DeepCopy()
		}
	}
}

// defaultHostNetworkPorts makes each container port without a host port
// its own host port.
func defaultHostNetworkPorts(containers []corev1.Container) {
	for i := range containers {
		for j := range containers[i].Ports {
			p := &containers[i].Ports[j]
			if p.HostPort == 0 {
				p.HostPort = p.ContainerPort
			}
		}
	}
}

// SetDefaults_PodSpec applies the defaults of every pod spec, a pod's and
// a template's: DNS policy ClusterFirst, restart policy Always, an empty
// security context, a 30s termination grace period and the default
// scheduler.
func SetDefaults_PodSpec(obj *corev1.PodSpec) {
	// serviceAccount is the deprecated alias of serviceAccountName: the
	// two are kept in step, serviceAccountName winning when both are set
	// (kubernetes v1.37 pkg/apis/core/v1/defaults.go, SetDefaults_PodSpec;
	// formerly done by conversion). As defaulting also runs when a stored
	// object is read, a pod whose serviceAccountName the ServiceAccount
	// admission plugin set reads back with both.
	if obj.ServiceAccountName == "" {
		obj.ServiceAccountName = obj.DeprecatedServiceAccount //nolint:staticcheck // kept in step with its replacement, as upstream
	}
	obj.DeprecatedServiceAccount = obj.ServiceAccountName //nolint:staticcheck // kept in step with its replacement, as upstream
	if obj.DNSPolicy == "" {
		obj.DNSPolicy = corev1.DNSClusterFirst
	}
	if obj.RestartPolicy == "" {
		obj.RestartPolicy = corev1.RestartPolicyAlways
	}
	if obj.SecurityContext == nil {
		obj.SecurityContext = &corev1.PodSecurityContext{}
	}
	if obj.TerminationGracePeriodSeconds == nil {
		obj.TerminationGracePeriodSeconds = ptr.To(int64(corev1.DefaultTerminationGracePeriodSeconds))
	}
	if obj.SchedulerName == "" {
		obj.SchedulerName = corev1.DefaultSchedulerName
	}
}

// SetDefaults_Container defaults the pull policy from the image's tag
// (Always for "latest" or no tag, IfNotPresent otherwise, including images
// that do not parse) and the termination message path and policy.
func SetDefaults_Container(obj *corev1.Container) {
	if obj.ImagePullPolicy == "" {
		obj.ImagePullPolicy = pullPolicyFor(obj.Image)
	}
	if obj.TerminationMessagePath == "" {
		obj.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if obj.TerminationMessagePolicy == "" {
		obj.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
}

// pullPolicyFor is the default pull policy of image.
func pullPolicyFor(image string) corev1.PullPolicy {
	if tag, _ := imageTag(image); tag == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// SetDefaults_EphemeralContainer defaults an ephemeral container as a
// container.
func SetDefaults_EphemeralContainer(obj *corev1.EphemeralContainer) {
	SetDefaults_Container((*corev1.Container)(&obj.EphemeralContainerCommon))
}

// SetDefaults_Probe defaults a probe's timings: 1s timeout, 10s period,
// success threshold 1, failure threshold 3.
func SetDefaults_Probe(obj *corev1.Probe) {
	if obj.TimeoutSeconds == 0 {
		obj.TimeoutSeconds = 1
	}
	if obj.PeriodSeconds == 0 {
		obj.PeriodSeconds = 10
	}
	if obj.SuccessThreshold == 0 {
		obj.SuccessThreshold = 1
	}
	if obj.FailureThreshold == 0 {
		obj.FailureThreshold = 3
	}
}

// SetDefaults_HTTPGetAction defaults the path to "/" and the scheme to
// HTTP.
func SetDefaults_HTTPGetAction(obj *corev1.HTTPGetAction) {
	if obj.Path == "" {
		obj.Path = "/"
	}
	if obj.Scheme == "" {
		obj.Scheme = corev1.URISchemeHTTP
	}
}

// SetDefaults_Volume makes a volume without a source an emptyDir, and
// defaults an image volume's pull policy as a container's.
func SetDefaults_Volume(obj *corev1.Volume) {
	if ptr.AllPtrFieldsNil(&obj.VolumeSource) {
		obj.VolumeSource = corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	}
	if obj.Image != nil && obj.Image.PullPolicy == "" {
		obj.Image.PullPolicy = pullPolicyFor(obj.Image.Reference)
	}
}

// SetDefaults_SecretVolumeSource defaults the file mode to 0644.
func SetDefaults_SecretVolumeSource(obj *corev1.SecretVolumeSource) {
	if obj.DefaultMode == nil {
		obj.DefaultMode = ptr.To(corev1.SecretVolumeSourceDefaultMode)
	}
}

// SetDefaults_ConfigMapVolumeSource defaults the file mode to 0644.
func SetDefaults_ConfigMapVolumeSource(obj *corev1.ConfigMapVolumeSource) {
	if obj.DefaultMode == nil {
		obj.DefaultMode = ptr.To(corev1.ConfigMapVolumeSourceDefaultMode)
	}
}

// SetDefaults_DownwardAPIVolumeSource defaults the file mode to 0644.
func SetDefaults_DownwardAPIVolumeSource(obj *corev1.DownwardAPIVolumeSource) {
	if obj.DefaultMode == nil {
		obj.DefaultMode = ptr.To(corev1.DownwardAPIVolumeSourceDefaultMode)
	}
}

// SetDefaults_ProjectedVolumeSource defaults the file mode to 0644.
func SetDefaults_ProjectedVolumeSource(obj *corev1.ProjectedVolumeSource) {
	if obj.DefaultMode == nil {
		obj.DefaultMode = ptr.To(corev1.ProjectedVolumeSourceDefaultMode)
	}
}

// SetDefaults_ServiceAccountTokenProjection defaults the token's lifetime
// to one hour.
func SetDefaults_ServiceAccountTokenProjection(obj *corev1.ServiceAccountTokenProjection) {
	if obj.ExpirationSeconds == nil {
		obj.ExpirationSeconds = ptr.To(int64(time.Hour.Seconds()))
	}
}

// SetDefaults_HostPathVolumeSource defaults the type to "" (no check).
func SetDefaults_HostPathVolumeSource(obj *corev1.HostPathVolumeSource) {
	if obj.Type == nil {
		obj.Type = ptr.To(corev1.HostPathUnset)
	}
}

// SetDefaults_ISCSIVolumeSource defaults the interface to "default" (a
// +default marker upstream).
func SetDefaults_ISCSIVolumeSource(obj *corev1.ISCSIVolumeSource) {
	if obj.ISCSIInterface == "" {
		obj.ISCSIInterface = "default"
	}
}

// SetDefaults_RBDVolumeSource defaults pool "rbd", user "admin" and keyring
// "/etc/ceph/keyring" (+default markers upstream).
func SetDefaults_RBDVolumeSource(obj *corev1.RBDVolumeSource) {
	if obj.RBDPool == "" {
		obj.RBDPool = "rbd"
	}
	if obj.RadosUser == "" {
		obj.RadosUser = "admin"
	}
	if obj.Keyring == "" {
		obj.Keyring = "/etc/ceph/keyring"
	}
}

// SetDefaults_AzureDiskVolumeSource defaults caching ReadWrite, fsType
// ext4, readOnly false and kind Shared.
func SetDefaults_AzureDiskVolumeSource(obj *corev1.AzureDiskVolumeSource) {
	if obj.CachingMode == nil {
		obj.CachingMode = ptr.To(corev1.AzureDataDiskCachingReadWrite)
	}
	if obj.Kind == nil {
		obj.Kind = ptr.To(corev1.AzureSharedBlobDisk)
	}
	if obj.FSType == nil {
		obj.FSType = ptr.To("ext4")
	}
	if obj.ReadOnly == nil {
		obj.ReadOnly = ptr.To(false)
	}
}

// SetDefaults_ScaleIOVolumeSource defaults storage mode ThinProvisioned and
// fsType xfs.
func SetDefaults_ScaleIOVolumeSource(obj *corev1.ScaleIOVolumeSource) {
	if obj.StorageMode == "" {
		obj.StorageMode = "ThinProvisioned"
	}
	if obj.FSType == "" {
		obj.FSType = "xfs"
	}
}

// SetDefaults_PersistentVolumeClaimSpec defaults the volume mode to
// Filesystem.
func SetDefaults_PersistentVolumeClaimSpec(obj *corev1.PersistentVolumeClaimSpec) {
	if obj.VolumeMode == nil {
		obj.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
	}
}

// SetDefaults_ObjectFieldSelector defaults the API version to "v1".
func SetDefaults_ObjectFieldSelector(obj *corev1.ObjectFieldSelector) {
	if obj.APIVersion == "" {
		obj.APIVersion = "v1"
	}
}

// SetDefaults_ResourceList rounds each quantity up to milli scale (kube
// keeps this for API compatibility).
func SetDefaults_ResourceList(obj *corev1.ResourceList) {
	for name, q := range *obj {
		const milliScale = -3
		q.RoundUp(milliScale)
		(*obj)[name] = q
	}
}

// SetDefaults_PodStatus keeps podIP and podIPs in step, as v1.37's
// defaulting (pkg/apis/core/v1/defaults.go; before, the conversion did it):
// the list from the single field, the single field from the list's first
// entry, and podIP wins when both are set and differ (older kubelets set
// only it). hostIP and hostIPs are not synced.
func SetDefaults_PodStatus(s *corev1.PodStatus) {
	hasIP, hasIPs := s.PodIP != "", len(s.PodIPs) > 0
	switch {
	case hasIP && !hasIPs:
		s.PodIPs = []corev1.PodIP{{IP: s.PodIP}}
	case !hasIP && hasIPs:
		s.PodIP = s.PodIPs[0].IP
	case hasIP && hasIPs && s.PodIPs[0].IP != s.PodIP:
		s.PodIPs = []corev1.PodIP{{IP: s.PodIP}}
	}
}
