package podsecurity

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The checks follow k8s.io/pod-security-admission/policy/check_*.go of
// kubernetes v1.37 (staging/src/k8s.io/pod-security-admission/policy):
// each check's ID, level, versioned variants, overrides, forbidden reason
// and detail text are upstream's (re-read check by check; checks_test.go
// names the file and commit of every expected text).
//
// Not implemented: upstream's check_ulimits_baseline.go (ID "ulimits",
// baseline, v1.37+) and check_cgroupOptions_restricted.go
// ("cgroupOptions_restricted", restricted, v1.38+) read
// securityContext.ulimits and securityContext.cgroupOptions, fields that
// k8s.io/api v0.37.2 does not have: no pod stored by kapi can set them.

// result is one check's outcome.
type result struct {
	allowed bool
	reason  string
	detail  string
}

var ok = result{allowed: true}

type checkFunc func(meta *metav1.ObjectMeta, spec *corev1.PodSpec, v Version) result

type check struct {
	id    string
	level Level
	// minMinor is the first policy version with the check.
	minMinor int
	// overrides are baseline check IDs this restricted check replaces.
	overrides []string
	fn        checkFunc
}

// checks are sorted by level then ID: the order upstream's evaluator runs
// them, hence the order of the reasons in its messages.
var checks = []check{
	{id: "appArmorProfile", level: LevelBaseline, fn: checkAppArmor},
	{id: "capabilities_baseline", level: LevelBaseline, fn: checkCapabilitiesBaseline},
	{id: "hostNamespaces", level: LevelBaseline, fn: checkHostNamespaces},
	{id: "hostPathVolumes", level: LevelBaseline, fn: checkHostPathVolumes},
	{id: "hostPorts", level: LevelBaseline, fn: checkHostPorts},
	{id: "hostProbesAndHostLifecycle", level: LevelBaseline, minMinor: 34, fn: checkHostProbes},
	{id: "privileged", level: LevelBaseline, fn: checkPrivileged},
	{id: "procMount", level: LevelBaseline, fn: checkProcMountBaseline},
	{id: "seLinuxOptions", level: LevelBaseline, fn: checkSELinux},
	{id: "seccompProfile_baseline", level: LevelBaseline, fn: checkSeccompBaseline},
	{id: "sysctls", level: LevelBaseline, fn: checkSysctls},
	{id: "windowsHostProcess", level: LevelBaseline, fn: checkHostProcess},

	{id: "allowPrivilegeEscalation", level: LevelRestricted, minMinor: 8, fn: checkAllowPrivilegeEscalation},
	{id: "capabilities_restricted", level: LevelRestricted, minMinor: 22, overrides: []string{"capabilities_baseline"}, fn: checkCapabilitiesRestricted},
	{id: "procMount_restricted", level: LevelRestricted, minMinor: 35, overrides: []string{"procMount"}, fn: checkProcMountRestricted},
	{id: "restrictedVolumes", level: LevelRestricted, overrides: []string{"hostPathVolumes"}, fn: checkRestrictedVolumes},
	{id: "runAsNonRoot", level: LevelRestricted, fn: checkRunAsNonRoot},
	{id: "runAsUser", level: LevelRestricted, minMinor: 23, fn: checkRunAsUser},
	{id: "seccompProfile_restricted", level: LevelRestricted, minMinor: 19, overrides: []string{"seccompProfile_baseline"}, fn: checkSeccompRestricted},
}

// evaluate runs the checks of lv on a pod and returns the failed ones.
func evaluate(lv LevelVersion, meta *metav1.ObjectMeta, spec *corev1.PodSpec) []result {
	if lv.Level == LevelPrivileged {
		return nil
	}
	var overridden []string
	if lv.Level == LevelRestricted {
		for _, c := range checks {
			if c.level == LevelRestricted && lv.Version.atLeast(c.minMinor) {
				overridden = append(overridden, c.overrides...)
			}
		}
	}
	var out []result
	for _, c := range checks {
		if c.level.rank() > lv.Level.rank() || !lv.Version.atLeast(c.minMinor) || slices.Contains(overridden, c.id) {
			continue
		}
		if r := c.fn(meta, spec, lv.Version); !r.allowed {
			out = append(out, r)
		}
	}
	return out
}

// message is upstream's text of failed checks: "reason (detail), ...".
func message(rs []result) string {
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		if r.detail == "" {
			parts = append(parts, r.reason)
		} else {
			parts = append(parts, fmt.Sprintf("%s (%s)", r.reason, r.detail))
		}
	}
	return strings.Join(parts, ", ")
}

// reasons are the failed checks' reasons, comma-joined.
func reasons(rs []result) string {
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		parts = append(parts, r.reason)
	}
	return strings.Join(parts, ", ")
}

// helpers (upstream policy/helpers.go)

func pluralize(one, many string, n int) string {
	if n == 1 {
		return one
	}
	return many
}

// joinQuote wraps each item in double quotes, without escaping (upstream's
// joinQuote: an annotation value's own quotes stay as they are).
func joinQuote(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	return `"` + strings.Join(ss, `", "`) + `"`
}

func containersText(names []string) string {
	return pluralize("container", "containers", len(names)) + " " + joinQuote(names)
}

// visitContainers visits init, regular and ephemeral containers, in that
// order (upstream's visitContainers).
func visitContainers(spec *corev1.PodSpec, f func(c *corev1.Container)) {
	for i := range spec.InitContainers {
		f(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		f(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		c := corev1.Container(spec.EphemeralContainers[i].EphemeralContainerCommon)
		f(&c)
	}
}

// sortedSet returns the distinct values of ss, sorted.
func sortedSet(ss []string) []string {
	out := slices.Clone(ss)
	sort.Strings(out)
	return slices.Compact(out)
}

// userNamespaced reports whether the pod runs in a user namespace
// (hostUsers: false), which relaxes some checks (upstream's
// relaxPolicyForUserNamespacePod).
func userNamespaced(spec *corev1.PodSpec) bool {
	return spec.HostUsers != nil && !*spec.HostUsers
}

func isWindows(spec *corev1.PodSpec) bool {
	return spec.OS != nil && spec.OS.Name == corev1.Windows
}

// baseline checks

func checkAppArmor(meta *metav1.ObjectMeta, spec *corev1.PodSpec, _ Version) result {
	allowedType := func(t corev1.AppArmorProfileType) bool {
		return t == corev1.AppArmorProfileTypeRuntimeDefault || t == corev1.AppArmorProfileTypeLocalhost
	}
	var setters, badValues, badContainers []string
	if sc := spec.SecurityContext; sc != nil && sc.AppArmorProfile != nil && !allowedType(sc.AppArmorProfile.Type) {
		setters = append(setters, "pod")
		badValues = append(badValues, string(sc.AppArmorProfile.Type))
	}
	visitContainers(spec, func(c *corev1.Container) {
		if sc := c.SecurityContext; sc != nil && sc.AppArmorProfile != nil && !allowedType(sc.AppArmorProfile.Type) {
			badContainers = append(badContainers, c.Name)
			badValues = append(badValues, string(sc.AppArmorProfile.Type))
		}
	})
	if len(badContainers) > 0 {
		setters = append(setters, containersText(badContainers))
	}
	badValues = sortedSet(badValues)
	var annotations []string
	for k, v := range meta.Annotations {
		if strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) &&
			v != "" && v != corev1.DeprecatedAppArmorBetaProfileRuntimeDefault && !strings.HasPrefix(v, corev1.DeprecatedAppArmorBetaProfileNamePrefix) {
			annotations = append(annotations, fmt.Sprintf("%s=%q", k, v))
		}
	}
	if len(annotations) > 0 {
		sort.Strings(annotations)
		badValues = append(badValues, annotations...)
		setters = append(setters, pluralize("annotation", "annotations", len(annotations)))
	}
	if len(setters) == 0 {
		return ok
	}
	return result{
		reason: pluralize("forbidden AppArmor profile", "forbidden AppArmor profiles", len(badValues)),
		detail: fmt.Sprintf("%s must not set AppArmor profile type to %s", strings.Join(setters, " and "), joinQuote(badValues)),
	}
}

// capabilitiesBaseline are the capabilities baseline lets containers add
// (check_capabilities_baseline.go).
var capabilitiesBaseline = []string{"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}

func checkCapabilitiesBaseline(_ *metav1.ObjectMeta, spec *corev1.PodSpec, _ Version) result {
	var bad, caps []string
	visitContainers(spec, func(c *corev1.Container) {
		if c.SecurityContext == nil || c.SecurityContext.Capabilities == nil {
			return
		}
		found := false
		for _, cp := range c.SecurityContext.Capabilities.Add {
			if !slices.Contains(capabilitiesBaseline, string(cp)) {
				found = true
				caps = append(caps, string(cp))
			}
		}
		if found {
			bad = append(bad, c.Name)
		}
	})
	if len(bad) == 0 {
		return ok
	}
	return result{reason: "non-default capabilities", detail: fmt.Sprintf("%s must not include %s in securityContext.capabilities.add", containersText(bad), joinQuote(sortedSet(caps)))}
}

func checkHostNamespaces(_ *metav1.ObjectMeta, spec *corev1.PodSpec, _ Version) result {
	var set []string
	if spec.HostNetwork {
		set = append(set, "hostNetwork=true")
	}
	if spec.HostPID {
		set = append(set, "hostPID=true")
	}
	if spec.HostIPC {
		set = append(set, "hostIPC=true")
	}
	if len(set) == 0 {
		return ok
	}
	return result{reason: "host namespaces", detail: strings.Join(set, ", ")}
}

func checkHostPathVolumes(_ *metav1.ObjectMeta, spec *corev1.PodSpec, _ Version) result {
	var bad []string
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			bad = append(bad, v.Name)
		}
	}
	if len(bad) == 0 {
		return ok
	}
	return result{reason: "hostPath volumes", detail: pluralize("volume", "volumes", len(bad)) + " " + joinQuote(bad)}
}

func checkHostPorts(_ *metav1.ObjectMeta, spec *corev1.PodSpec, _ Version) result {
	var bad, ports []string
	visitContainers(spec, func(c *corev1.Container) {
		found := false
		for _, p := range c.Ports {
			if p.HostPort != 0 {
				found = true
				ports = append(ports, strconv.Itoa(int(p.HostPort)))
			}
		}
		if found {
			bad = append(bad, c.Name)
		}
	})
	if len(bad) == 0 {
		return ok
	}
	// As upstream (a sets.String of the ports' decimal texts), the ports are
	// distinct and sorted as strings: "10000, 80", not "80, 10000".
	ports = sortedSet(ports)
	return result{reason: "hostPort", detail: fmt.Sprintf("%s %s %s %s", containersText(bad), pluralize("uses", "use", len(bad)), pluralize("hostPort", "hostPorts", len(ports)), strings.Join(ports, ", "))}
}

func checkHostProbes(_ *metav1.ObjectMeta, spec *corev1.PodSpec, _ Version) result {
	var bad, hosts []string
	visitContainers(spec, func(c *corev1.Container) {
		var found []string
		for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
			if p == nil {
				continue
			}
			if p.HTTPGet != nil && p.HTTPGet.Host != "" {
				found = append(found, p.HTTPGet.Host)
			}
			if p.TCPSocket != nil && p.TCPSocket.Host != "" {
				found = append(found, p.TCPSocket.Host)
			}
		}
		if c.Lifecycle != nil {
			for _, h := range []*corev1.LifecycleHandler{c.Lifecycle.PostStart, c.Lifecycle.PreStop} {
				if h == nil {
					continue
				}
				if h.HTTPGet != nil && h.HTTPGet.Host != "" {
					found = append(found, h.HTTPGet.Host)
				}
				if h.TCPSocket != nil && h.TCPSocket.Host != "" {
					found = append(found, h.TCPSocket.Host)
				}
			}
		}
		if len(found) > 0 {
			bad = append(bad, c.Name)
			hosts = append(hosts, found...)
		}
	})
	if len(bad) == 0 {
		return ok
	}
	bad, hosts = sortedSet(bad), sortedSet(hosts)
	return result{reason: "probe or lifecycle host", detail: fmt.Sprintf("%s %s %s %s", containersText(bad), pluralize("uses", "use", len(bad)),
		pluralize("probe or lifecycle host", "probe or lifecycle hosts", len(hosts)), joinQuote(hosts))}
}

func checkPrivileged(_ *metav1.ObjectMeta, spec *corev1.PodSpec, _ Version) result {
	var bad []string
	visitContainers(spec, func(c *corev1.Container) {
		if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
			bad = append(bad, c.Name)
		}
	})
	if len(bad) == 0 {
		return ok
	}
	return result{reason: "privileged", detail: containersText(bad) + " must not set securityContext.privileged=true"}
}

// checkProcMountBaseline: before v1.35 any procMount but Default is
// forbidden; from v1.35 pods in a user namespace may set any
// (check_procMount_baseline.go, ID "procMount").
func checkProcMountBaseline(meta *metav1.ObjectMeta, spec *corev1.PodSpec, v Version) result {
	if v.atLeast(35) && userNamespaced(spec) {
		return ok
	}
	return checkProcMountRestricted(meta, spec, v)
}

// checkProcMountRestricted forbids any procMount but Default, user
// namespace or not (check_procMount_restricted.go: from v1.35 it replaces
// the relaxed baseline check in restricted).
func checkProcMountRestricted(_ *metav1.ObjectMeta, spec *corev1.PodSpec, _ Version) result {
	var bad, types []string
	visitContainers(spec, func(c *corev1.Container) {
		if c.SecurityContext != nil && c.SecurityContext.ProcMount != nil && *c.SecurityContext.ProcMount != corev1.DefaultProcMount {
			bad = append(bad, c.Name)
			types = append(types, string(*c.SecurityContext.ProcMount))
		}
	})
	if len(bad) == 0 {
		return ok
	}
	return result{reason: "procMount", detail: fmt.Sprintf("%s must not set securityContext.procMount to %s", containersText(bad), joinQuote(sortedSet(types)))}
}

// checkSELinux allows types container_t, container_init_t and
// container_kvm_t, and container_engine_t from v1.31 (the Pod Security
// Standards page, https://kubernetes.io/docs/concepts/security/pod-security-standards/).
func checkSELinux(_ *metav1.ObjectMeta, spec *corev1.PodSpec, v Version) result {
	var setters, badTypes []string
	setUser, setRole := false, false
	valid := func(o *corev1.SELinuxOptions) bool {
		good := true
		switch o.Type {
		case "", "container_t", "container_init_t", "container_kvm_t":
		case "container_engine_t":
			if !v.atLeast(31) {
				good = false
				badTypes = append(badTypes, o.Type)
			}
		default:
			good = false
			badTypes = append(badTypes, o.Type)
		}
		if o.User != "" {
			good, setUser = false, true
		}
		if o.Role != "" {
			good, setRole = false, true
		}
		return good
	}
	if sc := spec.SecurityContext; sc != nil && sc.SELinuxOptions != nil && !valid(sc.SELinuxOptions) {
		setters = append(setters, "pod")
	}
	var bad []string
	visitContainers(spec, func(c *corev1.Container) {
		if c.SecurityContext != nil && c.SecurityContext.SELinuxOptions != nil && !valid(c.SecurityContext.SELinuxOptions) {
			bad = append(bad, c.Name)
		}
	})
	if len(bad) > 0 {
		setters = append(setters, containersText(bad))
	}
	if len(setters) == 0 {
		return ok
	}
	// Bad types, then "user may not be set" and "role may not be set", each
	// when it applies (check_seLinuxOptions.go; its test expects
	// `pod set forbidden securityContext.seLinuxOptions: user may not be set`).
	var data []string
	if badTypes = sortedSet(badTypes); len(badTypes) > 0 {
		data = append(data, pluralize("type", "types", len(badTypes))+" "+joinQuote(badTypes))
	}
	if setUser {
		data = append(data, "user may not be set")
	}
	if setRole {
		data = append(data, "role may not be set")
	}
	return result{reason: "seLinuxOptions", detail: fmt.Sprintf("%s set forbidden securityContext.seLinuxOptions: %s", strings.Join(setters, " and "), strings.Join(data, "; "))}
}

func validSeccomp(t corev1.SeccompProfileType) bool {
	return t == corev1.SeccompProfileTypeRuntimeDefault || t == corev1.SeccompProfileTypeLocalhost
}

// Seccomp alpha annotations, read by policy versions before v1.19.
const (
	seccompPodAnnotation             = "seccomp.security.alpha.kubernetes.io/pod"
	seccompContainerAnnotationPrefix = "container.seccomp.security.alpha.kubernetes.io/"
)

func validSeccompAnnotation(v string) bool {
	return v == corev1.SeccompProfileRuntimeDefault || v == corev1.DeprecatedSeccompProfileDockerDefault ||
		strings.HasPrefix(v, corev1.SeccompLocalhostProfileNamePrefix)
}

// checkSeccompBaseline: before v1.19 the seccomp alpha annotations are
// checked, from v1.19 the seccompProfile fields
// (check_seccompProfile_baseline.go).
func checkSeccompBaseline(meta *metav1.ObjectMeta, spec *corev1.PodSpec, v Version) result {
	if !v.atLeast(19) {
		var bad []string
		if val, found := meta.Annotations[seccompPodAnnotation]; found && !validSeccompAnnotation(val) {
			bad = append(bad, fmt.Sprintf("%s=%q", seccompPodAnnotation, val))
		}
		visitContainers(spec, func(c *corev1.Container) {
			key := seccompContainerAnnotationPrefix + c.Name
			if val, found := meta.Annotations[key]; found && !validSeccompAnnotation(val) {
				bad = append(bad, fmt.Sprintf("%s=%q", key, val))
			}
		})
		if len(bad) == 0 {
			return ok
		}
		bad = sortedSet(bad)
		return result{reason: "seccompProfile", detail: fmt.Sprintf("forbidden %s %s", pluralize("annotation", "annotations", len(bad)), strings.Join(bad, ", "))}
	}
	var setters, bad, values []string
	if sc := spec.SecurityContext; sc != nil && sc.SeccompProfile != nil && !validSeccomp(sc.SeccompProfile.Type) {
		setters = append(setters, "pod")
		values = append(values, string(sc.SeccompProfile.Type))
	}
	visitContainers(spec, func(c *corev1.Container) {
		if sc := c.SecurityContext; sc != nil && sc.SeccompProfile != nil && !validSeccomp(sc.SeccompProfile.Type) {
			bad = append(bad, c.Name)
			values = append(values, string(sc.SeccompProfile.Type))
		}
	})
	if len(bad) > 0 {
		setters = append(setters, containersText(bad))
	}
	if len(setters) == 0 {
		return ok
	}
	return result{reason: "seccompProfile", detail: fmt.Sprintf("%s must not set securityContext.seccompProfile.type to %s", strings.Join(setters, " and "), joinQuote(sortedSet(values)))}
}

// sysctlsAllowed are the safe sysctls by the version that allowed them
// (check_sysctls.go).
var sysctlsAllowed = []struct {
	minor int
	names []string
}{
	{0, []string{"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start"}},
	{27, []string{"net.ipv4.ip_local_reserved_ports"}},
	{29, []string{"net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"}},
	{32, []string{"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"}},
	{37, []string{"net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_notsent_lowat"}},
}

func checkSysctls(_ *metav1.ObjectMeta, spec *corev1.PodSpec, v Version) result {
	if spec.SecurityContext == nil {
		return ok
	}
	var bad []string
	for _, s := range spec.SecurityContext.Sysctls {
		allowed := false
		for _, set := range sysctlsAllowed {
			if v.atLeast(set.minor) && slices.Contains(set.names, s.Name) {
				allowed = true
			}
		}
		if !allowed {
			bad = append(bad, s.Name)
		}
	}
	if len(bad) == 0 {
		return ok
	}
	return result{reason: "forbidden sysctls", detail: strings.Join(bad, ", ")}
}

func checkHostProcess(_ *metav1.ObjectMeta, spec *corev1.PodSpec, _ Version) result {
	hostProcess := func(sc *corev1.WindowsSecurityContextOptions) bool {
		return sc != nil && sc.HostProcess != nil && *sc.HostProcess
	}
	var setters, bad []string
	if spec.SecurityContext != nil && hostProcess(spec.SecurityContext.WindowsOptions) {
		setters = append(setters, "pod")
	}
	visitContainers(spec, func(c *corev1.Container) {
		if c.SecurityContext != nil && hostProcess(c.SecurityContext.WindowsOptions) {
			bad = append(bad, c.Name)
		}
	})
	if len(bad) > 0 {
		setters = append(setters, containersText(bad))
	}
	if len(setters) == 0 {
		return ok
	}
	return result{reason: "hostProcess", detail: strings.Join(setters, " and ") + " must not set securityContext.windowsOptions.hostProcess=true"}
}

// restricted checks

// checkAllowPrivilegeEscalation: from v1.25 Windows pods are exempt
// (check_allowPrivilegeEscalation.go).
func checkAllowPrivilegeEscalation(_ *metav1.ObjectMeta, spec *corev1.PodSpec, v Version) result {
	if v.atLeast(25) && isWindows(spec) {
		return ok
	}
	var bad []string
	visitContainers(spec, func(c *corev1.Container) {
		if c.SecurityContext == nil || c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation {
			bad = append(bad, c.Name)
		}
	})
	if len(bad) == 0 {
		return ok
	}
	return result{reason: "allowPrivilegeEscalation != false", detail: containersText(bad) + " must set securityContext.allowPrivilegeEscalation=false"}
}

func checkCapabilitiesRestricted(_ *metav1.ObjectMeta, spec *corev1.PodSpec, v Version) result {
	if v.atLeast(25) && isWindows(spec) {
		return ok
	}
	var missingDrop, adding, caps []string
	visitContainers(spec, func(c *corev1.Container) {
		if c.SecurityContext == nil || c.SecurityContext.Capabilities == nil {
			missingDrop = append(missingDrop, c.Name)
			return
		}
		if !slices.Contains(c.SecurityContext.Capabilities.Drop, "ALL") {
			missingDrop = append(missingDrop, c.Name)
		}
		found := false
		for _, cp := range c.SecurityContext.Capabilities.Add {
			if cp != "NET_BIND_SERVICE" {
				found = true
				caps = append(caps, string(cp))
			}
		}
		if found {
			adding = append(adding, c.Name)
		}
	})
	var details []string
	if len(missingDrop) > 0 {
		details = append(details, containersText(missingDrop)+` must set securityContext.capabilities.drop=["ALL"]`)
	}
	if len(adding) > 0 {
		details = append(details, fmt.Sprintf("%s must not include %s in securityContext.capabilities.add", containersText(adding), joinQuote(sortedSet(caps))))
	}
	if len(details) == 0 {
		return ok
	}
	return result{reason: "unrestricted capabilities", detail: strings.Join(details, "; ")}
}

// volumeType is the JSON name of a volume's source, as upstream names
// restricted types.
func volumeType(v *corev1.Volume) string {
	s := v.VolumeSource
	switch {
	case s.HostPath != nil:
		return "hostPath"
	case s.GCEPersistentDisk != nil:
		return "gcePersistentDisk"
	case s.AWSElasticBlockStore != nil:
		return "awsElasticBlockStore"
	case s.GitRepo != nil:
		return "gitRepo"
	case s.NFS != nil:
		return "nfs"
	case s.ISCSI != nil:
		return "iscsi"
	case s.Glusterfs != nil:
		return "glusterfs"
	case s.RBD != nil:
		return "rbd"
	case s.FlexVolume != nil:
		return "flexVolume"
	case s.Cinder != nil:
		return "cinder"
	case s.CephFS != nil:
		return "cephfs"
	case s.Flocker != nil:
		return "flocker"
	case s.FC != nil:
		return "fc"
	case s.AzureFile != nil:
		return "azureFile"
	case s.VsphereVolume != nil:
		return "vsphereVolume"
	case s.Quobyte != nil:
		return "quobyte"
	case s.AzureDisk != nil:
		return "azureDisk"
	case s.PhotonPersistentDisk != nil:
		return "photonPersistentDisk"
	case s.PortworxVolume != nil:
		return "portworxVolume"
	case s.ScaleIO != nil:
		return "scaleIO"
	case s.StorageOS != nil:
		return "storageos"
	}
	return "unknown"
}

// checkRestrictedVolumes allows configMap, csi, downwardAPI, emptyDir,
// ephemeral, image, persistentVolumeClaim, projected and secret
// (check_restrictedVolumes.go).
func checkRestrictedVolumes(_ *metav1.ObjectMeta, spec *corev1.PodSpec, _ Version) result {
	var bad, types []string
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		s := v.VolumeSource
		switch {
		case s.ConfigMap != nil, s.CSI != nil, s.DownwardAPI != nil, s.EmptyDir != nil, s.Ephemeral != nil,
			s.Image != nil, s.PersistentVolumeClaim != nil, s.Projected != nil, s.Secret != nil:
			continue
		}
		bad = append(bad, v.Name)
		types = append(types, volumeType(v))
	}
	if len(bad) == 0 {
		return ok
	}
	types = sortedSet(types)
	return result{reason: "restricted volume types", detail: fmt.Sprintf("%s %s %s %s %s", pluralize("volume", "volumes", len(bad)), joinQuote(bad),
		pluralize("uses", "use", len(bad)), pluralize("restricted volume type", "restricted volume types", len(types)), joinQuote(types))}
}

// checkRunAsNonRoot: from v1.35 pods in a user namespace are exempt; before,
// never (upstream dropped the perma-alpha UserNamespacesPodSecurityStandards
// gate in v1.35 and relaxes only the v1.35 variant).
func checkRunAsNonRoot(_ *metav1.ObjectMeta, spec *corev1.PodSpec, v Version) result {
	if v.atLeast(35) && userNamespaced(spec) {
		return ok
	}
	var setters, explicit, implicit []string
	podSet := false
	if sc := spec.SecurityContext; sc != nil && sc.RunAsNonRoot != nil {
		if *sc.RunAsNonRoot {
			podSet = true
		} else {
			setters = append(setters, "pod")
		}
	}
	visitContainers(spec, func(c *corev1.Container) {
		if c.SecurityContext != nil && c.SecurityContext.RunAsNonRoot != nil {
			if !*c.SecurityContext.RunAsNonRoot {
				explicit = append(explicit, c.Name)
			}
		} else if !podSet {
			implicit = append(implicit, c.Name)
		}
	})
	if len(explicit) > 0 {
		setters = append(setters, containersText(explicit))
	}
	if len(setters) > 0 {
		return result{reason: "runAsNonRoot != true", detail: strings.Join(setters, " and ") + " must not set securityContext.runAsNonRoot=false"}
	}
	if len(implicit) > 0 {
		return result{reason: "runAsNonRoot != true", detail: "pod or " + containersText(implicit) + " must set securityContext.runAsNonRoot=true"}
	}
	return ok
}

// checkRunAsUser: as checkRunAsNonRoot, user namespace pods are exempt
// from v1.35.
func checkRunAsUser(_ *metav1.ObjectMeta, spec *corev1.PodSpec, v Version) result {
	if v.atLeast(35) && userNamespaced(spec) {
		return ok
	}
	var setters, bad []string
	if sc := spec.SecurityContext; sc != nil && sc.RunAsUser != nil && *sc.RunAsUser == 0 {
		setters = append(setters, "pod")
	}
	visitContainers(spec, func(c *corev1.Container) {
		if c.SecurityContext != nil && c.SecurityContext.RunAsUser != nil && *c.SecurityContext.RunAsUser == 0 {
			bad = append(bad, c.Name)
		}
	})
	if len(bad) > 0 {
		setters = append(setters, containersText(bad))
	}
	if len(setters) == 0 {
		return ok
	}
	return result{reason: "runAsUser=0", detail: strings.Join(setters, " and ") + " must not set runAsUser=0"}
}

func checkSeccompRestricted(_ *metav1.ObjectMeta, spec *corev1.PodSpec, v Version) result {
	if v.atLeast(25) && isWindows(spec) {
		return ok
	}
	validType := validSeccomp
	var setters, badValues, explicit, implicit []string
	podSet := false
	if sc := spec.SecurityContext; sc != nil && sc.SeccompProfile != nil {
		if validType(sc.SeccompProfile.Type) {
			podSet = true
		} else {
			setters = append(setters, "pod")
			badValues = append(badValues, string(sc.SeccompProfile.Type))
		}
	}
	visitContainers(spec, func(c *corev1.Container) {
		if sc := c.SecurityContext; sc != nil && sc.SeccompProfile != nil {
			if !validType(sc.SeccompProfile.Type) {
				explicit = append(explicit, c.Name)
				badValues = append(badValues, string(sc.SeccompProfile.Type))
			}
		} else if !podSet {
			implicit = append(implicit, c.Name)
		}
	})
	if len(explicit) > 0 {
		setters = append(setters, containersText(explicit))
	}
	if len(setters) > 0 {
		return result{reason: "seccompProfile", detail: fmt.Sprintf("%s must not set securityContext.seccompProfile.type to %s", strings.Join(setters, " and "), joinQuote(sortedSet(badValues)))}
	}
	if len(implicit) > 0 {
		return result{reason: "seccompProfile", detail: "pod or " + containersText(implicit) + ` must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`}
	}
	return ok
}
