package core

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The pod's host namespaces live on the v1 pod spec (upstream's internal
// types keep them in the pod security context): these helpers read them.
func hostNetwork(spec *corev1.PodSpec) bool { return spec.HostNetwork }

// hostUsers is whether the pod uses the host's user namespace (the
// default).
func hostUsers(spec *corev1.PodSpec) bool {
	return spec.HostUsers == nil || *spec.HostUsers
}

// validatePodSecurityContext checks the pod-level security settings.
func validatePodSecurityContext(spec *corev1.PodSpec, specPath, fldPath *field.Path, opts PodValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	sc := spec.SecurityContext
	if sc != nil {
		if sc.FSGroup != nil {
			for _, msg := range validation.IsValidGroupID(*sc.FSGroup) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("fsGroup"), *sc.FSGroup, msg))
			}
		}
		if sc.RunAsUser != nil {
			for _, msg := range validation.IsValidUserID(*sc.RunAsUser) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("runAsUser"), *sc.RunAsUser, msg))
			}
		}
		if sc.RunAsGroup != nil {
			for _, msg := range validation.IsValidGroupID(*sc.RunAsGroup) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("runAsGroup"), *sc.RunAsGroup, msg))
			}
		}
		for g, gid := range sc.SupplementalGroups {
			for _, msg := range validation.IsValidGroupID(gid) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("supplementalGroups").Index(g), gid, msg))
			}
		}
	}
	// Upstream reports this conflict under securityContext (where its
	// internal types keep both fields).
	if spec.ShareProcessNamespace != nil && *spec.ShareProcessNamespace && spec.HostPID {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("shareProcessNamespace"), *spec.ShareProcessNamespace, "ShareProcessNamespace and HostPID cannot both be enabled"))
	}
	if sc == nil {
		return allErrs
	}
	if len(sc.Sysctls) != 0 {
		allErrs = append(allErrs, validateSysctls(spec, fldPath.Child("sysctls"), opts)...)
	}
	if sc.FSGroupChangePolicy != nil {
		valid := []corev1.PodFSGroupChangePolicy{corev1.FSGroupChangeAlways, corev1.FSGroupChangeOnRootMismatch}
		if !contains(valid, *sc.FSGroupChangePolicy) {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("fsGroupChangePolicy"), sc.FSGroupChangePolicy, valid))
		}
	}
	allErrs = append(allErrs, validateSeccompProfileField(sc.SeccompProfile, fldPath.Child("seccompProfile"))...)
	allErrs = append(allErrs, validateWindowsSecurityContextOptions(sc.WindowsOptions, fldPath.Child("windowsOptions"))...)
	allErrs = append(allErrs, ValidateAppArmorProfileField(sc.AppArmorProfile, fldPath.Child("appArmorProfile"))...)
	if sc.SupplementalGroupsPolicy != nil {
		valid := []corev1.SupplementalGroupsPolicy{corev1.SupplementalGroupsPolicyMerge, corev1.SupplementalGroupsPolicyStrict}
		if !contains(valid, *sc.SupplementalGroupsPolicy) {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("supplementalGroupsPolicy"), sc.SupplementalGroupsPolicy, valid))
		}
	}
	if sc.SELinuxChangePolicy != nil {
		valid := []corev1.PodSELinuxChangePolicy{corev1.SELinuxChangePolicyMountOption, corev1.SELinuxChangePolicyRecursive}
		if !contains(valid, *sc.SELinuxChangePolicy) {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("seLinuxChangePolicy"), *sc.SELinuxChangePolicy, valid))
		}
	}
	return allErrs
}

const (
	sysctlSegmentFmt      = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
	sysctlContainSlashFmt = "(" + sysctlSegmentFmt + "[\\./])*" + sysctlSegmentFmt
	sysctlMaxLength       = 253
)

// Compiled on first use, not at package initialisation (which every
// process start pays for): only pods' validation matches them.
var sysctlContainSlashRegexp = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^" + sysctlContainSlashFmt + "$") })

func validateSysctls(spec *corev1.PodSpec, fldPath *field.Path, opts PodValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	names := map[string]bool{}
	for i, s := range spec.SecurityContext.Sysctls {
		p := fldPath.Index(i).Child("name")
		switch {
		case s.Name == "":
			allErrs = append(allErrs, field.Required(p, ""))
		case len(s.Name) > sysctlMaxLength || !sysctlContainSlashRegexp().MatchString(s.Name):
			allErrs = append(allErrs, field.Invalid(p, s.Name, fmt.Sprintf("must have at most %d characters and match regex %s", sysctlMaxLength, sysctlContainSlashRegexp())))
		case names[s.Name]:
			allErrs = append(allErrs, field.Duplicate(p, s.Name))
		}
		if !opts.AllowNamespacedSysctlsForHostNetAndHostIPC {
			if err := hostSysctlError(s.Name, spec, p); err != nil {
				allErrs = append(allErrs, err)
			}
		}
		names[s.Name] = true
	}
	return allErrs
}

// hostSysctlError rejects a sysctl of the network or IPC namespace in a
// pod sharing that namespace with the host.
func hostSysctlError(name string, spec *corev1.PodSpec, fldPath *field.Path) *field.Error {
	// Sysctl names may use "/" as the separator.
	n := strings.ReplaceAll(name, "/", ".")
	ipc := n == "kernel.sem" || strings.HasPrefix(n, "kernel.shm") || strings.HasPrefix(n, "kernel.msg") || strings.HasPrefix(n, "fs.mqueue.")
	switch {
	case spec.HostNetwork && strings.HasPrefix(n, "net."):
		return field.Invalid(fldPath, name, "may not be specified when 'hostNetwork' is true")
	case spec.HostIPC && ipc:
		return field.Invalid(fldPath, name, "may not be specified when 'hostIPC' is true")
	}
	return nil
}

// ValidateSecurityContext checks a container's security context.
func ValidateSecurityContext(sc *corev1.SecurityContext, fldPath *field.Path, hostUsers bool, opts PodValidationOptions) field.ErrorList {
	if sc == nil {
		return nil
	}
	var allErrs field.ErrorList
	if sc.Privileged != nil && *sc.Privileged && !opts.AllowPrivileged {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("privileged"), "disallowed by cluster policy"))
	}
	if sc.RunAsUser != nil {
		for _, msg := range validation.IsValidUserID(*sc.RunAsUser) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("runAsUser"), *sc.RunAsUser, msg))
		}
	}
	if sc.RunAsGroup != nil {
		for _, msg := range validation.IsValidGroupID(*sc.RunAsGroup) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("runAsGroup"), *sc.RunAsGroup, msg))
		}
	}
	if sc.ProcMount != nil {
		valid := []corev1.ProcMountType{corev1.DefaultProcMount, corev1.UnmaskedProcMount}
		if !contains(valid, *sc.ProcMount) {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("procMount"), *sc.ProcMount, valid))
		}
		if hostUsers && *sc.ProcMount == corev1.UnmaskedProcMount {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("procMount"), sc.ProcMount, "`hostUsers` must be false to use `Unmasked`"))
		}
	}
	allErrs = append(allErrs, validateSeccompProfileField(sc.SeccompProfile, fldPath.Child("seccompProfile"))...)
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		if sc.Privileged != nil && *sc.Privileged {
			allErrs = append(allErrs, field.Invalid(fldPath, sc, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
		}
		if sc.Capabilities != nil {
			for _, c := range sc.Capabilities.Add {
				if string(c) == "CAP_SYS_ADMIN" {
					allErrs = append(allErrs, field.Invalid(fldPath, sc, "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"))
				}
			}
		}
	}
	allErrs = append(allErrs, validateWindowsSecurityContextOptions(sc.WindowsOptions, fldPath.Child("windowsOptions"))...)
	return append(allErrs, ValidateAppArmorProfileField(sc.AppArmorProfile, fldPath.Child("appArmorProfile"))...)
}

func validateSeccompProfileField(sp *corev1.SeccompProfile, fldPath *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	var allErrs field.ErrorList
	switch sp.Type {
	case corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined:
	case "":
		allErrs = append(allErrs, field.Required(fldPath.Child("type"), "type is required when seccompProfile is set"))
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), sp.Type,
			[]corev1.SeccompProfileType{corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined}))
	}
	if sp.Type == corev1.SeccompProfileTypeLocalhost {
		if sp.LocalhostProfile == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("localhostProfile"), "must be set when seccomp type is Localhost"))
		} else {
			allErrs = append(allErrs, validateLocalDescendingPath(*sp.LocalhostProfile, fldPath.Child("localhostProfile"))...)
		}
	} else if sp.LocalhostProfile != nil {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("localhostProfile"), sp, "can only be set when seccomp type is Localhost"))
	}
	return allErrs
}

// ValidateSeccompProfile checks a deprecated seccomp annotation's value.
func ValidateSeccompProfile(p string, fldPath *field.Path) field.ErrorList {
	switch {
	case p == corev1.SeccompProfileRuntimeDefault, p == corev1.DeprecatedSeccompProfileDockerDefault, p == corev1.SeccompProfileNameUnconfined:
		return nil
	case strings.HasPrefix(p, corev1.SeccompLocalhostProfileNamePrefix):
		return validateLocalDescendingPath(strings.TrimPrefix(p, corev1.SeccompLocalhostProfileNamePrefix), fldPath)
	}
	return field.ErrorList{field.Invalid(fldPath, p, "must be a valid seccomp profile")}
}

// ValidateAppArmorProfileField checks an appArmorProfile field.
func ValidateAppArmorProfileField(profile *corev1.AppArmorProfile, fldPath *field.Path) field.ErrorList {
	if profile == nil {
		return nil
	}
	var allErrs field.ErrorList
	switch profile.Type {
	case corev1.AppArmorProfileTypeLocalhost:
		lp := profile.LocalhostProfile
		if lp == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("localhostProfile"), "must be set when AppArmor type is Localhost"))
			break
		}
		if trimmed := strings.TrimSpace(*lp); trimmed != *lp {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("localhostProfile"), *lp, "must not be padded with whitespace"))
		} else if trimmed == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("localhostProfile"), "must be set when AppArmor type is Localhost"))
		}
		const maxLocalhostProfileLength = 4095
		if len(*lp) > maxLocalhostProfileLength {
			allErrs = append(allErrs, field.TooLong(fldPath.Child("localhostProfile"), "", maxLocalhostProfileLength))
		}
	case corev1.AppArmorProfileTypeRuntimeDefault, corev1.AppArmorProfileTypeUnconfined:
		if profile.LocalhostProfile != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("localhostProfile"), profile.LocalhostProfile, "can only be set when AppArmor type is Localhost"))
		}
	case "":
		allErrs = append(allErrs, field.Required(fldPath.Child("type"), "type is required when appArmorProfile is set"))
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), profile.Type,
			[]corev1.AppArmorProfileType{corev1.AppArmorProfileTypeLocalhost, corev1.AppArmorProfileTypeRuntimeDefault, corev1.AppArmorProfileTypeUnconfined}))
	}
	return allErrs
}

const (
	maxGMSACredentialSpecLengthInKiB = 64
	maxGMSACredentialSpecLength      = maxGMSACredentialSpecLengthInKiB * 1024
	maxRunAsUserNameDomainLength     = 256
	maxRunAsUserNameUserLength       = 104
)

// Compiled on first use, not at package initialisation (which every
// process start pays for): only pods' validation matches them.
var (
	ctrlRegex                      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[[:cntrl:]]+`) })
	validNetBiosRegex              = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[^\\/:\*\?"<>|\.][^\\/:\*\?"<>|]{0,14}$`) })
	windowsDNSLabel                = `[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?`
	validWindowsUserDomainDNSRegex = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(fmt.Sprintf(`^%s(?:\.%s)*$`, windowsDNSLabel, windowsDNSLabel))
	})
	invalidUserNameCharsRegex      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`["/\\:;|=,\+\*\?<>@\[\]]`) })
	invalidUserNameDotsSpacesRegex = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[\. ]+$`) })
)

func validateWindowsSecurityContextOptions(w *corev1.WindowsSecurityContextOptions, fldPath *field.Path) field.ErrorList {
	if w == nil {
		return nil
	}
	var allErrs field.ErrorList
	if w.GMSACredentialSpecName != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*w.GMSACredentialSpecName) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("gmsaCredentialSpecName"), w.GMSACredentialSpecName, msg))
		}
	}
	if w.GMSACredentialSpec != nil {
		if l := len(*w.GMSACredentialSpec); l == 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("gmsaCredentialSpec"), w.GMSACredentialSpec, "gmsaCredentialSpec cannot be an empty string"))
		} else if l > maxGMSACredentialSpecLength {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("gmsaCredentialSpec"), w.GMSACredentialSpec,
				fmt.Sprintf("gmsaCredentialSpec size must be under %d KiB", maxGMSACredentialSpecLengthInKiB)))
		}
	}
	if w.RunAsUserName == nil {
		return allErrs
	}
	p := fldPath.Child("runAsUserName")
	name := *w.RunAsUserName
	invalid := func(msg string) { allErrs = append(allErrs, field.Invalid(p, w.RunAsUserName, msg)) }
	parts := strings.Split(name, "\\")
	switch {
	case name == "":
		invalid("runAsUserName cannot be an empty string")
	case ctrlRegex().MatchString(name):
		invalid("runAsUserName cannot contain control characters")
	case len(parts) > 2:
		invalid("runAsUserName cannot contain more than one backslash")
	default:
		domain, user, hasDomain := "", parts[0], false
		if len(parts) == 2 {
			domain, user, hasDomain = parts[0], parts[1], true
		}
		if len(domain) >= maxRunAsUserNameDomainLength {
			invalid(fmt.Sprintf("runAsUserName's Domain length must be under %d characters", maxRunAsUserNameDomainLength))
		}
		if hasDomain && !(validNetBiosRegex().MatchString(domain) || validWindowsUserDomainDNSRegex().MatchString(domain)) {
			invalid("runAsUserName's Domain doesn't match the NetBios nor the DNS format")
		}
		if l := len(user); l == 0 {
			invalid("runAsUserName's User cannot be empty")
		} else if l > maxRunAsUserNameUserLength {
			invalid(fmt.Sprintf("runAsUserName's User length must not be longer than %d characters", maxRunAsUserNameUserLength))
		}
		if invalidUserNameDotsSpacesRegex().MatchString(user) {
			invalid(`runAsUserName's User cannot contain only periods or spaces`)
		}
		if invalidUserNameCharsRegex().MatchString(user) {
			invalid(`runAsUserName's User cannot contain the following characters: "/\:;|=,+*?<>@[]`)
		}
	}
	return allErrs
}

// validateWindowsHostProcessPod: all containers or none are hostProcess,
// which needs host networking and privileged containers allowed.
func validateWindowsHostProcessPod(spec *corev1.PodSpec, fldPath *field.Path, opts PodValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	var podHostProcess *bool
	if spec.SecurityContext != nil && spec.SecurityContext.WindowsOptions != nil {
		podHostProcess = spec.SecurityContext.WindowsOptions.HostProcess
	}
	count, hostProcessCount := 0, 0
	visitContainers(spec, fldPath, func(c *corev1.Container, cp *field.Path) bool {
		count++
		var ctr *bool
		if c.SecurityContext != nil && c.SecurityContext.WindowsOptions != nil {
			ctr = c.SecurityContext.WindowsOptions.HostProcess
		}
		if podHostProcess != nil && ctr != nil && *podHostProcess != *ctr {
			allErrs = append(allErrs, field.Invalid(cp.Child("securityContext", "windowsOptions", "hostProcess"), *ctr,
				fmt.Sprintf("pod hostProcess value must be identical if both are specified, was %v", *podHostProcess)))
		}
		if ctr != nil && *ctr || ctr == nil && podHostProcess != nil && *podHostProcess {
			hostProcessCount++
		}
		return true
	})
	if hostProcessCount > 0 {
		if hostProcessCount != count {
			allErrs = append(allErrs, field.Invalid(fldPath, "", "If pod contains any hostProcess containers then all containers must be HostProcess containers"))
		}
		if !hostNetwork(spec) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("hostNetwork"), false, "hostNetwork must be true if pod contains any hostProcess containers"))
		}
		if !opts.AllowPrivileged {
			allErrs = append(allErrs, field.Forbidden(fldPath, "hostProcess containers are disallowed by cluster policy"))
		}
	}
	return allErrs
}

// validateHostUsers: a pod in its own user namespace may not share the
// host's network, PID or IPC namespaces.
func validateHostUsers(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	if hostUsers(spec) {
		return nil
	}
	var allErrs field.ErrorList
	const msg = "when `pod.Spec.HostUsers` is false"
	if spec.HostNetwork {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("hostNetwork"), msg))
	}
	// Upstream's paths for these two are capitalized.
	if spec.HostPID {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("HostPID"), msg))
	}
	if spec.HostIPC {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("HostIPC"), msg))
	}
	return allErrs
}

// validateLinux: no Windows options in a Linux pod.
func validateLinux(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	const msg = "windows options cannot be set for a linux pod"
	if sc := spec.SecurityContext; sc != nil && sc.WindowsOptions != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("securityContext").Child("windowsOptions"), msg))
	}
	visitContainers(spec, fldPath, func(c *corev1.Container, cp *field.Path) bool {
		if c.SecurityContext != nil && c.SecurityContext.WindowsOptions != nil {
			allErrs = append(allErrs, field.Forbidden(cp.Child("securityContext").Child("windowsOptions"), msg))
		}
		return true
	})
	return allErrs
}

// validateWindows: no Linux-only settings in a Windows pod.
func validateWindows(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	const msg = "cannot be set for a windows pod"
	forbid := func(set bool, p *field.Path) {
		if set {
			allErrs = append(allErrs, field.Forbidden(p, msg))
		}
	}
	scp := fldPath.Child("securityContext")
	if sc := spec.SecurityContext; sc != nil {
		forbid(sc.AppArmorProfile != nil, scp.Child("appArmorProfile"))
		forbid(sc.SELinuxOptions != nil, scp.Child("seLinuxOptions"))
	}
	forbid(spec.HostUsers != nil, fldPath.Child("hostUsers"))
	forbid(spec.HostPID, fldPath.Child("hostPID"))
	forbid(spec.HostIPC, fldPath.Child("hostIPC"))
	if sc := spec.SecurityContext; sc != nil {
		forbid(sc.SeccompProfile != nil, scp.Child("seccompProfile"))
		forbid(sc.FSGroup != nil, scp.Child("fsGroup"))
		forbid(sc.FSGroupChangePolicy != nil, scp.Child("fsGroupChangePolicy"))
		forbid(len(sc.Sysctls) > 0, scp.Child("sysctls"))
	}
	forbid(spec.ShareProcessNamespace != nil, fldPath.Child("shareProcessNamespace"))
	if sc := spec.SecurityContext; sc != nil {
		forbid(sc.RunAsUser != nil, scp.Child("runAsUser"))
		forbid(sc.RunAsGroup != nil, scp.Child("runAsGroup"))
		forbid(sc.SupplementalGroups != nil, scp.Child("supplementalGroups"))
		forbid(sc.SupplementalGroupsPolicy != nil, scp.Child("supplementalGroupsPolicy"))
		forbid(sc.SELinuxChangePolicy != nil, scp.Child("seLinuxChangePolicy"))
	}
	visitContainers(spec, fldPath, func(c *corev1.Container, cp *field.Path) bool {
		sc := c.SecurityContext
		if sc == nil {
			return true
		}
		p := cp.Child("securityContext")
		forbid(sc.AppArmorProfile != nil, p.Child("appArmorProfile"))
		forbid(sc.SELinuxOptions != nil, p.Child("seLinuxOptions"))
		forbid(sc.SeccompProfile != nil, p.Child("seccompProfile"))
		forbid(sc.Capabilities != nil, p.Child("capabilities"))
		forbid(sc.ReadOnlyRootFilesystem != nil, p.Child("readOnlyRootFilesystem"))
		forbid(sc.Privileged != nil, p.Child("privileged"))
		forbid(sc.AllowPrivilegeEscalation != nil, p.Child("allowPrivilegeEscalation"))
		forbid(sc.ProcMount != nil, p.Child("procMount"))
		forbid(sc.RunAsUser != nil, p.Child("runAsUser"))
		forbid(sc.RunAsGroup != nil, p.Child("runAsGroup"))
		return true
	})
	return allErrs
}
