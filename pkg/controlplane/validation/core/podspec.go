package core

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Limits of a pod's DNS configuration (libc's).
const (
	MaxDNSNameservers     = 3
	MaxDNSSearchPaths     = 32
	MaxDNSSearchListChars = 2048
)

// ValidatePodSpec checks a pod spec, a pod's or a template's (fldPath is
// its path, e.g. "spec" or "spec.template.spec"). podMeta, the pod's
// metadata when the spec is a pod's, lets ephemeral volume claim names be
// checked; nil for templates.
func ValidatePodSpec(spec *corev1.PodSpec, podMeta *metav1.ObjectMeta, fldPath *field.Path, opts PodValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	if spec.TerminationGracePeriodSeconds == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("terminationGracePeriodSeconds"), ""))
	}
	gracePeriod := spec.TerminationGracePeriodSeconds
	users := hostUsers(spec)

	vols, errs := ValidateVolumes(spec.Volumes, podMeta, fldPath.Child("volumes"), opts)
	allErrs = append(allErrs, errs...)
	claims := map[string]bool{}
	for _, c := range spec.ResourceClaims {
		if c.Name != "" {
			claims[c.Name] = true
		}
	}
	allErrs = append(allErrs, validatePodResourceClaims(spec.ResourceClaims, fldPath.Child("resourceClaims"))...)
	allErrs = append(allErrs, validateContainers(spec.Containers, vols, claims, gracePeriod, fldPath.Child("containers"), opts, spec.RestartPolicy, users)...)
	allErrs = append(allErrs, validateInitContainers(spec.InitContainers, spec.Containers, vols, claims, gracePeriod, fldPath.Child("initContainers"), opts, spec.RestartPolicy, users)...)
	allErrs = append(allErrs, validateEphemeralContainers(spec.EphemeralContainers, spec.Containers, spec.InitContainers, vols, claims, fldPath.Child("ephemeralContainers"), opts, spec.RestartPolicy, users)...)
	allErrs = append(allErrs, validatePodResources(spec, claims, fldPath.Child("resources"), opts)...)
	allErrs = append(allErrs, validatePodHostNetworkDeps(spec, fldPath, opts)...)
	allErrs = append(allErrs, validateRestartPolicy(spec.RestartPolicy, fldPath.Child("restartPolicy"), opts)...)
	allErrs = append(allErrs, validateDNSPolicy(spec.DNSPolicy, fldPath.Child("dnsPolicy"))...)
	allErrs = append(allErrs, metav1validation.ValidateLabels(spec.NodeSelector, fldPath.Child("nodeSelector"))...)
	allErrs = append(allErrs, validatePodSecurityContext(spec, fldPath, fldPath.Child("securityContext"), opts)...)
	allErrs = append(allErrs, validateImagePullSecrets(spec.ImagePullSecrets, fldPath.Child("imagePullSecrets"))...)
	allErrs = append(allErrs, validateAffinity(spec.Affinity, opts, fldPath.Child("affinity"))...)
	allErrs = append(allErrs, validatePodDNSConfig(spec.DNSConfig, spec.DNSPolicy, fldPath.Child("dnsConfig"))...)
	for i, g := range spec.ReadinessGates {
		allErrs = append(allErrs, ValidateQualifiedName(string(g.ConditionType), fldPath.Child("readinessGates").Index(i).Child("conditionType"))...)
	}
	allErrs = append(allErrs, validateSchedulingGates(spec.SchedulingGates, fldPath.Child("schedulingGates"))...)
	allErrs = append(allErrs, validateTopologySpreadConstraints(spec.TopologySpreadConstraints, fldPath.Child("topologySpreadConstraints"), opts)...)
	allErrs = append(allErrs, validateWindowsHostProcessPod(spec, fldPath, opts)...)
	allErrs = append(allErrs, validateHostUsers(spec, fldPath)...)
	if spec.ServiceAccountName != "" {
		allErrs = append(allErrs, nameErrors(apimachineryvalidation.ValidateServiceAccountName, spec.ServiceAccountName, fldPath.Child("serviceAccountName"))...)
	}
	if spec.NodeName != "" {
		allErrs = append(allErrs, nameErrors(validateNodeName, spec.NodeName, fldPath.Child("nodeName"))...)
	}
	if d := spec.ActiveDeadlineSeconds; d != nil && (*d < 1 || *d > math.MaxInt32) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("activeDeadlineSeconds"), *d, validation.InclusiveRangeError(1, math.MaxInt32)))
	}
	if spec.Hostname != "" {
		allErrs = append(allErrs, ValidateDNS1123Label(spec.Hostname, fldPath.Child("hostname"))...)
	}
	if spec.Subdomain != "" {
		allErrs = append(allErrs, ValidateDNS1123Label(spec.Subdomain, fldPath.Child("subdomain"))...)
	}
	if len(spec.Tolerations) > 0 {
		allErrs = append(allErrs, ValidateTolerations(spec.Tolerations, fldPath.Child("tolerations"))...)
	}
	for i, a := range spec.HostAliases {
		allErrs = append(allErrs, validation.IsValidIP(fldPath.Child("hostAliases").Index(i).Child("ip"), a.IP)...)
		for j, h := range a.Hostnames {
			allErrs = append(allErrs, ValidateDNS1123Subdomain(h, fldPath.Child("hostAliases").Index(i).Child("hostnames").Index(j))...)
		}
	}
	if spec.PriorityClassName != "" {
		allErrs = append(allErrs, nameErrors(validateClassName, spec.PriorityClassName, fldPath.Child("priorityClassName"))...)
	}
	if spec.RuntimeClassName != nil {
		allErrs = append(allErrs, nameErrors(validateClassName, *spec.RuntimeClassName, fldPath.Child("runtimeClassName"))...)
	}
	if p := spec.PreemptionPolicy; p != nil {
		switch *p {
		case corev1.PreemptLowerPriority, corev1.PreemptNever:
		case "":
			allErrs = append(allErrs, field.Required(fldPath.Child("preemptionPolicy"), ""))
		default:
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("preemptionPolicy"), p, []corev1.PreemptionPolicy{corev1.PreemptLowerPriority, corev1.PreemptNever}))
		}
	}
	if spec.Overhead != nil {
		allErrs = append(allErrs, validateOverhead(spec.Overhead, fldPath.Child("overhead"), opts)...)
	}
	allErrs = append(allErrs, validateStopSignals(spec, fldPath)...)
	if spec.OS != nil {
		osErrs := validateOS(spec.OS, fldPath.Child("os"))
		switch {
		case len(osErrs) > 0:
			allErrs = append(allErrs, osErrs...)
		case spec.OS.Name == corev1.Linux:
			allErrs = append(allErrs, validateLinux(spec, fldPath)...)
		case spec.OS.Name == corev1.Windows:
			allErrs = append(allErrs, validateWindows(spec, fldPath)...)
		}
	}
	return allErrs
}

func validatePodResourceClaims(claims []corev1.PodResourceClaim, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := map[string]bool{}
	for i, c := range claims {
		p := fldPath.Index(i)
		switch {
		case c.Name == "":
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		case names[c.Name]:
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), c.Name))
		default:
			allErrs = append(allErrs, ValidateDNS1123Label(c.Name, p.Child("name"))...)
			names[c.Name] = true
		}
		if c.ResourceClaimName != nil && c.ResourceClaimTemplateName != nil {
			allErrs = append(allErrs, field.Invalid(p, c, "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"))
		}
		if c.ResourceClaimName == nil && c.ResourceClaimTemplateName == nil {
			allErrs = append(allErrs, field.Invalid(p, c, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"))
		}
		if c.ResourceClaimName != nil {
			allErrs = append(allErrs, nameErrors(validateClassName, *c.ResourceClaimName, p.Child("resourceClaimName"))...)
		}
		if c.ResourceClaimTemplateName != nil {
			allErrs = append(allErrs, nameErrors(validateClassName, *c.ResourceClaimTemplateName, p.Child("resourceClaimTemplateName"))...)
		}
	}
	return allErrs
}

// validatePodHostNetworkDeps: with host networking, a pod's host ports
// must equal its container ports (a template may leave them 0: they are
// defaulted when its pods are created).
func validatePodHostNetworkDeps(spec *corev1.PodSpec, fldPath *field.Path, opts PodValidationOptions) field.ErrorList {
	if !spec.HostNetwork {
		return nil
	}
	var allErrs field.ErrorList
	for i, c := range spec.Containers {
		for j, port := range c.Ports {
			if hp, cp := port.HostPort, port.ContainerPort; (opts.ResourceIsPod || hp != 0) && hp != cp {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("containers").Index(i).Child("ports").Index(j).Child("hostPort"), port.HostPort,
					"must match `containerPort` when `hostNetwork` is true"))
			}
		}
	}
	return allErrs
}

var validRestartPolicies = []corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}

// validateRestartPolicy: a known policy, then the embedding resource's
// rule (opts.RestartPolicies).
func validateRestartPolicy(policy corev1.RestartPolicy, fldPath *field.Path, opts PodValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	switch policy {
	case corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
	case "":
		allErrs = append(allErrs, field.Required(fldPath, ""))
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath, policy, validRestartPolicies))
	}
	if len(opts.RestartPolicies) > 0 && !contains(opts.RestartPolicies, policy) {
		allErrs = append(allErrs, field.NotSupported(fldPath, policy, opts.RestartPolicies))
	}
	return allErrs
}

var validDNSPolicies = []corev1.DNSPolicy{corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone}

func validateDNSPolicy(policy corev1.DNSPolicy, fldPath *field.Path) field.ErrorList {
	switch policy {
	case corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone:
		return nil
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	}
	return field.ErrorList{field.NotSupported(fldPath, policy, validDNSPolicies)}
}

// validatePodDNSConfig: policy None needs nameservers; limits on
// nameservers and search paths (relaxed search validation: "_" allowed,
// "." alone allowed).
func validatePodDNSConfig(c *corev1.PodDNSConfig, policy corev1.DNSPolicy, fldPath *field.Path) field.ErrorList {
	if policy == corev1.DNSNone {
		if c == nil {
			return field.ErrorList{field.Required(fldPath, fmt.Sprintf("must provide `dnsConfig` when `dnsPolicy` is %s", corev1.DNSNone))}
		}
		if len(c.Nameservers) == 0 {
			return field.ErrorList{field.Required(fldPath.Child("nameservers"), fmt.Sprintf("must provide at least one DNS nameserver when `dnsPolicy` is %s", corev1.DNSNone))}
		}
	}
	if c == nil {
		return nil
	}
	var allErrs field.ErrorList
	if len(c.Nameservers) > MaxDNSNameservers {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("nameservers"), c.Nameservers, fmt.Sprintf("must not have more than %v nameservers", MaxDNSNameservers)))
	}
	for i, ns := range c.Nameservers {
		allErrs = append(allErrs, validation.IsValidIP(fldPath.Child("nameservers").Index(i), ns)...)
	}
	if len(c.Searches) > MaxDNSSearchPaths {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("searches"), c.Searches, fmt.Sprintf("must not have more than %v search paths", MaxDNSSearchPaths)))
	}
	if len(strings.Join(c.Searches, " ")) > MaxDNSSearchListChars {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("searches"), c.Searches,
			fmt.Sprintf("must not have more than %v characters (including spaces) in the search list", MaxDNSSearchListChars)))
	}
	for i, search := range c.Searches {
		if search == "." {
			continue
		}
		search = strings.TrimSuffix(search, ".")
		for _, msg := range validation.IsDNS1123SubdomainWithUnderscore(search) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("searches").Index(i), search, msg))
		}
	}
	for i, o := range c.Options {
		if o.Name == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("options").Index(i), "must not be empty"))
		}
	}
	return allErrs
}

func validateImagePullSecrets(secrets []corev1.LocalObjectReference, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, s := range secrets {
		if !reflect.DeepEqual(corev1.LocalObjectReference{Name: s.Name}, s) {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), s, "only name may be set"))
		}
	}
	return allErrs
}

func validateSchedulingGates(gates []corev1.PodSchedulingGate, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[string]bool{}
	for i, g := range gates {
		allErrs = append(allErrs, ValidateQualifiedName(g.Name, fldPath.Index(i))...)
		if seen[g.Name] {
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), g.Name))
		}
		seen[g.Name] = true
	}
	return allErrs
}

var validOS = []corev1.OSName{corev1.Linux, corev1.Windows}

func validateOS(os *corev1.PodOS, fldPath *field.Path) field.ErrorList {
	if os.Name == "" {
		return field.ErrorList{field.Required(fldPath.Child("name"), "cannot be empty")}
	}
	if !contains(validOS, os.Name) {
		return field.ErrorList{field.NotSupported(fldPath, os.Name, validOS)}
	}
	return nil
}

// Container stop signals (ContainerStopSignals): a stop signal needs the
// pod's OS; Windows supports SIGKILL and SIGTERM.
var (
	windowsStopSignals = []corev1.Signal{"SIGKILL", "SIGTERM"}
	linuxStopSignals   = linuxSignals()
)

func linuxSignals() []corev1.Signal {
	names := []string{"SIGABRT", "SIGALRM", "SIGBUS", "SIGCHLD", "SIGCLD", "SIGCONT", "SIGFPE", "SIGHUP", "SIGILL", "SIGINT", "SIGIO",
		"SIGIOT", "SIGKILL", "SIGPIPE", "SIGPOLL", "SIGPROF", "SIGPWR", "SIGQUIT", "SIGSEGV", "SIGSTKFLT", "SIGSTOP", "SIGSYS",
		"SIGTERM", "SIGTRAP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGUSR1", "SIGUSR2", "SIGVTALRM", "SIGWINCH", "SIGXCPU", "SIGXFSZ"}
	out := make([]corev1.Signal, 0, len(names)+32)
	for _, n := range names {
		out = append(out, corev1.Signal(n))
	}
	out = append(out, "SIGRTMIN")
	for i := 1; i <= 15; i++ {
		out = append(out, corev1.Signal(fmt.Sprintf("SIGRTMIN+%d", i)))
	}
	for i := 14; i >= 1; i-- {
		out = append(out, corev1.Signal(fmt.Sprintf("SIGRTMAX-%d", i)))
	}
	return append(out, "SIGRTMAX")
}

func validateStopSignals(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	visitContainers(spec, fldPath, func(c *corev1.Container, cp *field.Path) bool {
		if c.Lifecycle == nil || c.Lifecycle.StopSignal == nil {
			return true
		}
		p := cp.Child("lifecycle").Child("stopSignal")
		s := *c.Lifecycle.StopSignal
		switch {
		case spec.OS == nil || spec.OS.Name == "":
			allErrs = append(allErrs, field.Forbidden(p, "may not be set for containers with empty `spec.os.name`"))
		case spec.OS.Name == corev1.Windows && !contains(windowsStopSignals, s):
			allErrs = append(allErrs, field.NotSupported(p, s, windowsStopSignals))
		case spec.OS.Name == corev1.Linux && !contains(linuxStopSignals, s):
			allErrs = append(allErrs, field.NotSupported(p, s, linuxStopSignals))
		}
		return true
	})
	return allErrs
}

// Pod-specific annotations.

// ValidatePodSpecificAnnotations checks the annotations kube reads on
// pods: the mirror pod annotation needs a node, serialized tolerations,
// the deletion cost, seccomp and AppArmor annotations.
func ValidatePodSpecificAnnotations(annotations map[string]string, spec *corev1.PodSpec, fldPath *field.Path, opts PodValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	if v, ok := annotations[corev1.MirrorPodAnnotationKey]; ok && spec.NodeName == "" {
		allErrs = append(allErrs, field.Invalid(fldPath.Key(corev1.MirrorPodAnnotationKey), v, "must set spec.nodeName if mirror pod annotation is set"))
	}
	if v := annotations[corev1.TolerationsAnnotationKey]; v != "" {
		var tolerations []corev1.Toleration
		if err := json.Unmarshal([]byte(v), &tolerations); err != nil {
			allErrs = append(allErrs, field.Invalid(fldPath, corev1.TolerationsAnnotationKey, err.Error()))
		} else if len(tolerations) > 0 {
			allErrs = append(allErrs, ValidateTolerations(tolerations, fldPath.Child(corev1.TolerationsAnnotationKey))...)
		}
	}
	if !opts.AllowInvalidPodDeletionCost && !deletionCostValid(annotations) {
		allErrs = append(allErrs, field.Invalid(fldPath.Key(corev1.PodDeletionCost), annotations[corev1.PodDeletionCost], "must be a 32bit integer"))
	}
	if p, ok := annotations[corev1.SeccompPodAnnotationKey]; ok {
		allErrs = append(allErrs, ValidateSeccompProfile(p, fldPath.Child(corev1.SeccompPodAnnotationKey))...)
	}
	for _, k := range sortedKeys(annotations) {
		p := annotations[k]
		if strings.HasPrefix(k, corev1.SeccompContainerAnnotationKeyPrefix) {
			allErrs = append(allErrs, ValidateSeccompProfile(p, fldPath.Child(k))...)
		}
	}
	for _, k := range sortedKeys(annotations) {
		p := annotations[k]
		if !strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) {
			continue
		}
		name := strings.TrimPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix)
		found := false
		visitContainers(spec, nil, func(c *corev1.Container, _ *field.Path) bool {
			found = c.Name == name
			return !found
		})
		if !found {
			allErrs = append(allErrs, field.Invalid(fldPath.Key(k), name, "container not found"))
		}
		if p != "" && p != corev1.DeprecatedAppArmorBetaProfileRuntimeDefault && p != corev1.DeprecatedAppArmorBetaProfileNameUnconfined &&
			!strings.HasPrefix(p, corev1.DeprecatedAppArmorBetaProfileNamePrefix) {
			allErrs = append(allErrs, field.Invalid(fldPath.Key(k), p, fmt.Sprintf("invalid AppArmor profile name: %q", p)))
		}
	}
	return allErrs
}

func validateAnnotations(annotations map[string]string, fldPath *field.Path) field.ErrorList {
	return apimachineryvalidation.ValidateAnnotations(annotations, fldPath)
}

// validateSeccompAnnotationsAndFields: where a seccomp annotation and the
// matching field are both set, they must agree.
func validateSeccompAnnotationsAndFields(meta metav1.ObjectMeta, spec *corev1.PodSpec, specPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.SecurityContext != nil && spec.SecurityContext.SeccompProfile != nil {
		if a, ok := meta.Annotations[corev1.SeccompPodAnnotationKey]; ok {
			if err := seccompMatch(a, spec.SecurityContext.SeccompProfile, specPath.Child("securityContext").Child("seccompProfile")); err != nil {
				allErrs = append(allErrs, err)
			}
		}
	}
	visitContainers(spec, specPath, func(c *corev1.Container, cp *field.Path) bool {
		if c.SecurityContext == nil || c.SecurityContext.SeccompProfile == nil {
			return true
		}
		if a, ok := meta.Annotations[corev1.SeccompContainerAnnotationKeyPrefix+c.Name]; ok {
			if err := seccompMatch(a, c.SecurityContext.SeccompProfile, cp.Child("securityContext").Child("seccompProfile")); err != nil {
				allErrs = append(allErrs, err)
			}
		}
		return true
	})
	return allErrs
}

func seccompMatch(annotation string, f *corev1.SeccompProfile, fldPath *field.Path) *field.Error {
	switch f.Type {
	case corev1.SeccompProfileTypeUnconfined:
		if annotation != corev1.SeccompProfileNameUnconfined {
			return field.Forbidden(fldPath.Child("type"), "seccomp type in annotation and field must match")
		}
	case corev1.SeccompProfileTypeRuntimeDefault:
		if annotation != corev1.SeccompProfileRuntimeDefault && annotation != corev1.DeprecatedSeccompProfileDockerDefault {
			return field.Forbidden(fldPath.Child("type"), "seccomp type in annotation and field must match")
		}
	case corev1.SeccompProfileTypeLocalhost:
		if !strings.HasPrefix(annotation, corev1.SeccompLocalhostProfileNamePrefix) {
			return field.Forbidden(fldPath.Child("type"), "seccomp type in annotation and field must match")
		} else if f.LocalhostProfile == nil || strings.TrimPrefix(annotation, corev1.SeccompLocalhostProfileNamePrefix) != *f.LocalhostProfile {
			return field.Forbidden(fldPath.Child("localhostProfile"), "seccomp profile in annotation and field must match")
		}
	}
	return nil
}

// validateAppArmorAnnotationsAndFieldsMatchOnCreate: where a deprecated
// AppArmor annotation and the container's effective profile are both
// set, they must agree (Windows pods are not checked).
func validateAppArmorAnnotationsAndFieldsMatchOnCreate(meta metav1.ObjectMeta, spec *corev1.PodSpec, specPath *field.Path) field.ErrorList {
	if spec.OS != nil && spec.OS.Name == corev1.Windows {
		return nil
	}
	var allErrs field.ErrorList
	var podProfile *corev1.AppArmorProfile
	if spec.SecurityContext != nil {
		podProfile = spec.SecurityContext.AppArmorProfile
	}
	visitContainers(spec, specPath, func(c *corev1.Container, cp *field.Path) bool {
		profile := podProfile
		if c.SecurityContext != nil && c.SecurityContext.AppArmorProfile != nil {
			profile = c.SecurityContext.AppArmorProfile
		}
		if profile == nil {
			return true
		}
		a, ok := meta.Annotations[corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix+c.Name]
		if !ok {
			return true
		}
		p := cp.Child("securityContext").Child("appArmorProfile")
		const typeMismatch = "apparmor type in annotation and field must match"
		switch profile.Type {
		case corev1.AppArmorProfileTypeUnconfined:
			if a != corev1.DeprecatedAppArmorBetaProfileNameUnconfined {
				allErrs = append(allErrs, field.Forbidden(p.Child("type"), typeMismatch))
			}
		case corev1.AppArmorProfileTypeRuntimeDefault:
			if a != corev1.DeprecatedAppArmorBetaProfileRuntimeDefault {
				allErrs = append(allErrs, field.Forbidden(p.Child("type"), typeMismatch))
			}
		case corev1.AppArmorProfileTypeLocalhost:
			if !strings.HasPrefix(a, corev1.DeprecatedAppArmorBetaProfileNamePrefix) {
				allErrs = append(allErrs, field.Forbidden(p.Child("type"), typeMismatch))
			} else if profile.LocalhostProfile == nil || strings.TrimPrefix(a, corev1.DeprecatedAppArmorBetaProfileNamePrefix) != *profile.LocalhostProfile {
				allErrs = append(allErrs, field.Forbidden(p.Child("localhostProfile"), "apparmor profile in annotation and field must match"))
			}
		}
		return true
	})
	return allErrs
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
