package core

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// allowedEphemeralContainerFields are the container fields an ephemeral
// container may set.
var allowedEphemeralContainerFields = map[string]bool{
	"Name": true, "Image": true, "Command": true, "Args": true, "WorkingDir": true,
	"EnvFrom": true, "Env": true, "VolumeMounts": true, "VolumeDevices": true,
	"TerminationMessagePath": true, "TerminationMessagePolicy": true, "ImagePullPolicy": true,
	"SecurityContext": true, "Stdin": true, "StdinOnce": true, "TTY": true,
}

// validateContainers checks the regular containers: at least one, unique
// names, probes and lifecycle, restart policy and rules, no host port
// conflicts.
func validateContainers(containers []corev1.Container, volumes map[string]corev1.VolumeSource, claims map[string]bool, gracePeriod *int64,
	fldPath *field.Path, opts PodValidationOptions, podRestartPolicy corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	if len(containers) == 0 {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var allErrs field.ErrorList
	names := map[string]bool{}
	for i := range containers {
		c := &containers[i]
		p := fldPath.Index(i)
		allErrs = append(allErrs, validateContainerCommon(c, volumes, claims, p, opts, podRestartPolicy, hostUsers)...)
		if names[c.Name] {
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), c.Name))
		} else {
			names[c.Name] = true
		}
		if c.Lifecycle != nil {
			allErrs = append(allErrs, validateLifecycle(c.Lifecycle, gracePeriod, p.Child("lifecycle"))...)
		}
		allErrs = append(allErrs, validateProbes(c, gracePeriod, p)...)
		allErrs = append(allErrs, validateContainerRestartPolicy(c.RestartPolicy, c.RestartPolicyRules, p)...)
	}
	return append(allErrs, checkHostPortConflicts(containers, fldPath)...)
}

// validateInitContainers checks init containers: names unique among all
// containers, only restartable ones (sidecars) may have probes and
// lifecycle handlers, host ports checked one container at a time.
func validateInitContainers(containers, regular []corev1.Container, volumes map[string]corev1.VolumeSource, claims map[string]bool, gracePeriod *int64,
	fldPath *field.Path, opts PodValidationOptions, podRestartPolicy corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	var allErrs field.ErrorList
	names := map[string]bool{}
	for _, c := range regular {
		names[c.Name] = true
	}
	for i := range containers {
		c := &containers[i]
		p := fldPath.Index(i)
		allErrs = append(allErrs, validateContainerCommon(c, volumes, claims, p, opts, podRestartPolicy, hostUsers)...)
		allErrs = append(allErrs, validateInitContainerRestartPolicy(c.RestartPolicy, c.RestartPolicyRules, p)...)
		restartAlways := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		if names[c.Name] {
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), c.Name))
		} else if c.Name != "" {
			names[c.Name] = true
		}
		allErrs = append(allErrs, checkHostPortConflicts([]corev1.Container{*c}, fldPath)...)
		if restartAlways {
			if c.Lifecycle != nil {
				allErrs = append(allErrs, validateLifecycle(c.Lifecycle, gracePeriod, p.Child("lifecycle"))...)
			}
			allErrs = append(allErrs, validateProbes(c, gracePeriod, p)...)
			continue
		}
		const notSidecar = "may not be set for init containers without restartPolicy=Always"
		if c.Lifecycle != nil {
			allErrs = append(allErrs, field.Forbidden(p.Child("lifecycle"), notSidecar))
		}
		if c.LivenessProbe != nil {
			allErrs = append(allErrs, field.Forbidden(p.Child("livenessProbe"), notSidecar))
		}
		if c.ReadinessProbe != nil {
			allErrs = append(allErrs, field.Forbidden(p.Child("readinessProbe"), notSidecar))
		}
		if c.StartupProbe != nil {
			allErrs = append(allErrs, field.Forbidden(p.Child("startupProbe"), notSidecar))
		}
		if opts.AllowExistingRestartContainerForNonSidecarInitContainer {
			continue
		}
		for j, rp := range c.ResizePolicy {
			if rp.RestartPolicy == corev1.RestartContainer {
				allErrs = append(allErrs, field.Invalid(p.Child("resizePolicy").Index(j).Child("restartPolicy"), rp.RestartPolicy,
					"must not be set to 'RestartContainer' for non-sidecar initContainers"))
			}
		}
	}
	return allErrs
}

// Container restart policies and rules (upstream's ContainerRestartRules,
// beta and on by default since v1.35, and
// RestartAllContainersOnContainerExits, beta and on since v1.36: kapi
// serves both gates at their v1.37 defaults).
var (
	containerRestartPolicies       = []corev1.ContainerRestartPolicy{corev1.ContainerRestartPolicyAlways, corev1.ContainerRestartPolicyNever, corev1.ContainerRestartPolicyOnFailure}
	containerRestartRuleActions    = []corev1.ContainerRestartRuleAction{corev1.ContainerRestartRuleActionRestart, corev1.ContainerRestartRuleActionRestartAllContainers}
	containerRestartRuleOperators  = []corev1.ContainerRestartRuleOnExitCodesOperator{corev1.ContainerRestartRuleOnExitCodesOpIn, corev1.ContainerRestartRuleOnExitCodesOpNotIn}
	maxContainerRestartRules       = 20
	maxContainerRestartRuleCodes   = 255
	errRestartPolicyRequiredByRule = "must specify restartPolicy when restart rules are used"
)

// validateInitContainerRestartPolicy: an init container's rules need a
// restart policy; with one, the policy and rules are checked as a
// regular container's (Always, OnFailure and Never are all accepted).
func validateInitContainerRestartPolicy(policy *corev1.ContainerRestartPolicy, rules []corev1.ContainerRestartRule, fldPath *field.Path) field.ErrorList {
	if policy == nil {
		if len(rules) > 0 {
			return field.ErrorList{field.Required(fldPath.Child("restartPolicy"), errRestartPolicyRequiredByRule)}
		}
		return nil
	}
	return validateContainerRestartPolicy(policy, rules, fldPath)
}

// validateContainerRestartPolicy checks a container's restartPolicy and
// restartPolicyRules (upstream's validateContainerRestartPolicy).
func validateContainerRestartPolicy(policy *corev1.ContainerRestartPolicy, rules []corev1.ContainerRestartRule, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if policy == nil {
		if len(rules) == 0 {
			return nil
		}
		allErrs = append(allErrs, field.Required(fldPath.Child("restartPolicy"), errRestartPolicyRequiredByRule))
	} else if !slices.Contains(containerRestartPolicies, *policy) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("restartPolicy"), *policy, containerRestartPolicies))
	}
	rulesPath := fldPath.Child("restartPolicyRules")
	if len(rules) > maxContainerRestartRules {
		allErrs = append(allErrs, field.TooMany(rulesPath, len(rules), maxContainerRestartRules))
	}
	for i, rule := range rules {
		p := rulesPath.Index(i)
		if !slices.Contains(containerRestartRuleActions, rule.Action) {
			allErrs = append(allErrs, field.NotSupported(p.Child("action"), rule.Action, containerRestartRuleActions))
		}
		if rule.ExitCodes == nil {
			allErrs = append(allErrs, field.Required(p.Child("exitCodes"), "must be specified"))
			continue
		}
		if !slices.Contains(containerRestartRuleOperators, rule.ExitCodes.Operator) {
			allErrs = append(allErrs, field.NotSupported(p.Child("exitCodes").Child("operator"), rule.ExitCodes.Operator, containerRestartRuleOperators))
		}
		if len(rule.ExitCodes.Values) > maxContainerRestartRuleCodes {
			allErrs = append(allErrs, field.TooMany(p.Child("exitCodes").Child("values"), len(rule.ExitCodes.Values), maxContainerRestartRuleCodes))
		}
	}
	return allErrs
}

// validateEphemeralContainers checks ephemeral containers: the common
// rules, pod-only image rules, unique names, an existing target, only
// the allowed fields, no subPath mounts.
func validateEphemeralContainers(ecs []corev1.EphemeralContainer, containers, initContainers []corev1.Container, volumes map[string]corev1.VolumeSource,
	claims map[string]bool, fldPath *field.Path, opts PodValidationOptions, podRestartPolicy corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	if len(ecs) == 0 {
		return nil
	}
	var allErrs field.ErrorList
	others, all := map[string]bool{}, map[string]bool{}
	for _, c := range containers {
		others[c.Name], all[c.Name] = true, true
	}
	for _, c := range initContainers {
		others[c.Name], all[c.Name] = true, true
	}
	for i := range ecs {
		ec := &ecs[i]
		p := fldPath.Index(i)
		c := (*corev1.Container)(&ec.EphemeralContainerCommon)
		allErrs = append(allErrs, validateContainerCommon(c, volumes, claims, p, opts, podRestartPolicy, hostUsers)...)
		allErrs = append(allErrs, validateContainerOnlyForPod(c, p)...)
		if all[ec.Name] {
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), ec.Name))
		} else {
			all[ec.Name] = true
		}
		if ec.TargetContainerName != "" && !others[ec.TargetContainerName] {
			allErrs = append(allErrs, field.NotFound(p.Child("targetContainerName"), ec.TargetContainerName))
		}
		allErrs = append(allErrs, validateFieldAllowList(ec.EphemeralContainerCommon, allowedEphemeralContainerFields, "cannot be set for an Ephemeral Container", p)...)
		for j, vm := range ec.VolumeMounts {
			if vm.SubPath != "" {
				allErrs = append(allErrs, field.Forbidden(p.Child("volumeMounts").Index(j).Child("subPath"), "cannot be set for an Ephemeral Container"))
			}
			if vm.SubPathExpr != "" {
				allErrs = append(allErrs, field.Forbidden(p.Child("volumeMounts").Index(j).Child("subPathExpr"), "cannot be set for an Ephemeral Container"))
			}
		}
	}
	return allErrs
}

// validateContainerCommon applies the rules of every container kind.
func validateContainerCommon(c *corev1.Container, volumes map[string]corev1.VolumeSource, claims map[string]bool, p *field.Path,
	opts PodValidationOptions, podRestartPolicy corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	var allErrs field.ErrorList
	if c.Name == "" {
		allErrs = append(allErrs, field.Required(p.Child("name"), ""))
	} else {
		allErrs = append(allErrs, ValidateDNS1123Label(c.Name, p.Child("name"))...)
	}
	// Leading and trailing whitespace is tolerated here (pod templates use
	// " " as a placeholder); pods reject it (validateContainerOnlyForPod).
	if c.Image == "" {
		allErrs = append(allErrs, field.Required(p.Child("image"), ""))
	}
	switch c.TerminationMessagePolicy {
	case corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError:
	case "":
		allErrs = append(allErrs, field.Required(p.Child("terminationMessagePolicy"), ""))
	default:
		allErrs = append(allErrs, field.NotSupported(p.Child("terminationMessagePolicy"), c.TerminationMessagePolicy,
			[]corev1.TerminationMessagePolicy{corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError}))
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	devices := map[string]string{}
	for _, d := range c.VolumeDevices {
		devices[d.Name] = d.DevicePath
	}
	allErrs = append(allErrs, validateContainerPorts(c.Ports, p.Child("ports"))...)
	allErrs = append(allErrs, ValidateEnv(c.Env, p.Child("env"))...)
	allErrs = append(allErrs, ValidateEnvFrom(c.EnvFrom, p.Child("envFrom"))...)
	allErrs = append(allErrs, validateVolumeMounts(c.VolumeMounts, devices, volumes, c, p.Child("volumeMounts"))...)
	allErrs = append(allErrs, validateVolumeDevices(c.VolumeDevices, mounts, volumes, p.Child("volumeDevices"))...)
	allErrs = append(allErrs, validatePullPolicy(c.ImagePullPolicy, p.Child("imagePullPolicy"))...)
	allErrs = append(allErrs, ValidateContainerResourceRequirements(&c.Resources, claims, p.Child("resources"), opts)...)
	allErrs = append(allErrs, validateResizePolicy(c.ResizePolicy, p.Child("resizePolicy"), podRestartPolicy)...)
	return append(allErrs, ValidateSecurityContext(c.SecurityContext, p.Child("securityContext"), hostUsers, opts)...)
}

// validateContainerOnlyForPod is the pod-only container rule: no
// whitespace around the image.
func validateContainerOnlyForPod(c *corev1.Container, p *field.Path) field.ErrorList {
	if len(c.Image) != len(strings.TrimSpace(c.Image)) {
		return field.ErrorList{field.Invalid(p.Child("image"), c.Image, "must not have leading or trailing whitespace")}
	}
	return nil
}

var supportedPortProtocols = []corev1.Protocol{corev1.ProtocolSCTP, corev1.ProtocolTCP, corev1.ProtocolUDP}

func validateContainerPorts(ports []corev1.ContainerPort, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := map[string]bool{}
	for i, port := range ports {
		p := fldPath.Index(i)
		if port.Name != "" {
			if msgs := validation.IsValidPortName(port.Name); len(msgs) != 0 {
				for _, msg := range msgs {
					allErrs = append(allErrs, field.Invalid(p.Child("name"), port.Name, msg))
				}
			} else if names[port.Name] {
				allErrs = append(allErrs, field.Duplicate(p.Child("name"), port.Name))
			} else {
				names[port.Name] = true
			}
		}
		if port.ContainerPort == 0 {
			allErrs = append(allErrs, field.Required(p.Child("containerPort"), ""))
		} else {
			for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
				allErrs = append(allErrs, field.Invalid(p.Child("containerPort"), port.ContainerPort, msg))
			}
		}
		if port.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(port.HostPort)) {
				allErrs = append(allErrs, field.Invalid(p.Child("hostPort"), port.HostPort, msg))
			}
		}
		if port.Protocol == "" {
			allErrs = append(allErrs, field.Required(p.Child("protocol"), ""))
		} else if !contains(supportedPortProtocols, port.Protocol) {
			allErrs = append(allErrs, field.NotSupported(p.Child("protocol"), port.Protocol, supportedPortProtocols))
		}
	}
	return allErrs
}

// checkHostPortConflicts is Duplicate for a protocol/hostIP/hostPort
// used twice among containers.
func checkHostPortConflicts(containers []corev1.Container, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[string]bool{}
	for ci, c := range containers {
		for pi, port := range c.Ports {
			if port.HostPort == 0 {
				continue
			}
			key := fmt.Sprintf("%s/%s/%d", port.Protocol, port.HostIP, port.HostPort)
			if seen[key] {
				allErrs = append(allErrs, field.Duplicate(fldPath.Index(ci).Child("ports").Index(pi).Child("hostPort"), key))
			} else {
				seen[key] = true
			}
		}
	}
	return allErrs
}

// ValidateEnv checks environment variables: names (printable ASCII
// without "=", RelaxedEnvironmentVariableValidation being GA) and their
// sources.
func ValidateEnv(vars []corev1.EnvVar, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, ev := range vars {
		p := fldPath.Index(i)
		if ev.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		} else {
			for _, msg := range validation.IsRelaxedEnvVarName(ev.Name) {
				allErrs = append(allErrs, field.Invalid(p.Child("name"), ev.Name, msg))
			}
		}
		allErrs = append(allErrs, validateEnvVarValueFrom(ev, p.Child("valueFrom"))...)
	}
	return allErrs
}

var validEnvDownwardAPIFieldPaths = []string{
	"metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
	"status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs",
}

func validateEnvVarValueFrom(ev corev1.EnvVar, fldPath *field.Path) field.ErrorList {
	from := ev.ValueFrom
	if from == nil {
		return nil
	}
	var allErrs field.ErrorList
	n := 0
	if from.FieldRef != nil {
		n++
		allErrs = append(allErrs, validateObjectFieldSelector(from.FieldRef, validEnvDownwardAPIFieldPaths, fldPath.Child("fieldRef"))...)
	}
	if from.ResourceFieldRef != nil {
		n++
		allErrs = append(allErrs, validateContainerResourceFieldSelector(from.ResourceFieldRef, fldPath.Child("resourceFieldRef"), false)...)
	}
	if from.ConfigMapKeyRef != nil {
		n++
		allErrs = append(allErrs, validateKeySelector(from.ConfigMapKeyRef.Name, from.ConfigMapKeyRef.Key, fldPath.Child("configMapKeyRef"))...)
	}
	if from.SecretKeyRef != nil {
		n++
		allErrs = append(allErrs, validateKeySelector(from.SecretKeyRef.Name, from.SecretKeyRef.Key, fldPath.Child("secretKeyRef"))...)
	}
	if from.FileKeyRef != nil {
		n++
		allErrs = append(allErrs, validateFileKeySelector(from.FileKeyRef, fldPath.Child("fileKeyRef"))...)
	}
	switch {
	case n == 0:
		allErrs = append(allErrs, field.Invalid(fldPath, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"))
	case ev.Value != "":
		allErrs = append(allErrs, field.Invalid(fldPath, "", "may not be specified when `value` is not empty"))
	case n > 1:
		allErrs = append(allErrs, field.Invalid(fldPath, "", "may not have more than one field specified at a time"))
	}
	return allErrs
}

func validateKeySelector(name, key string, fldPath *field.Path) field.ErrorList {
	allErrs := nameErrors(validateSecretName, name, fldPath.Child("name"))
	if key == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("key"), ""))
	} else {
		for _, msg := range validation.IsConfigMapKey(key) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("key"), key, msg))
		}
	}
	return allErrs
}

// validateFileKeySelector checks an env file reference (EnvFiles): the
// volume, a relative path without "..", a key.
func validateFileKeySelector(s *corev1.FileKeySelector, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if s.VolumeName == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("volumeName"), ""))
	} else {
		allErrs = append(allErrs, ValidateDNS1123Label(s.VolumeName, fldPath.Child("volumeName"))...)
	}
	if s.Path == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("path"), ""))
	} else {
		allErrs = append(allErrs, ValidateLocalNonReservedPath(s.Path, fldPath.Child("path"))...)
	}
	if s.Key == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("key"), ""))
	}
	return allErrs
}

// validateObjectFieldSelector checks a downward API field reference
// against the paths allowed where it is used; annotations and labels may
// be subscripted (metadata.labels['key']).
func validateObjectFieldSelector(fs *corev1.ObjectFieldSelector, allowed []string, fldPath *field.Path) field.ErrorList {
	if fs.APIVersion == "" {
		return field.ErrorList{field.Required(fldPath.Child("apiVersion"), "")}
	}
	if fs.FieldPath == "" {
		return field.ErrorList{field.Required(fldPath.Child("fieldPath"), "")}
	}
	internal, err := convertDownwardAPIFieldLabel(fs.APIVersion, fs.FieldPath)
	if err != nil {
		return field.ErrorList{field.Invalid(fldPath.Child("fieldPath"), fs.FieldPath, fmt.Sprintf("error converting fieldPath: %v", err))}
	}
	if p, subscript, ok := splitMaybeSubscriptedPath(internal); ok {
		switch p {
		case "metadata.annotations":
			return ValidateQualifiedName(strings.ToLower(subscript), fldPath)
		case "metadata.labels":
			return ValidateQualifiedName(subscript, fldPath)
		default:
			return field.ErrorList{field.Invalid(fldPath, p, "does not support subscript")}
		}
	}
	if !contains(allowed, internal) {
		return field.ErrorList{field.NotSupported(fldPath.Child("fieldPath"), internal, allowed)}
	}
	return nil
}

// convertDownwardAPIFieldLabel is upstream's pods helper: the v1 field
// labels a downward API reference may name ("spec.host" is
// "spec.nodeName").
func convertDownwardAPIFieldLabel(version, label string) (string, error) {
	if version != "v1" {
		return "", fmt.Errorf("unsupported pod version: %s", version)
	}
	if p, _, ok := splitMaybeSubscriptedPath(label); ok {
		switch p {
		case "metadata.annotations", "metadata.labels":
			return label, nil
		default:
			return "", fmt.Errorf("field label does not support subscript: %s", label)
		}
	}
	switch label {
	case "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid",
		"spec.nodeName", "spec.restartPolicy", "spec.serviceAccountName", "spec.schedulerName",
		"status.phase", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs":
		return label, nil
	case "spec.host":
		return "spec.nodeName", nil
	}
	return "", fmt.Errorf("field label not supported: %s", label)
}

// splitMaybeSubscriptedPath splits "a.b['key']" into "a.b" and "key".
func splitMaybeSubscriptedPath(p string) (string, string, bool) {
	if !strings.HasSuffix(p, "']") {
		return p, "", false
	}
	parts := strings.SplitN(strings.TrimSuffix(p, "']"), "['", 2)
	if len(parts) < 2 || parts[0] == "" {
		return p, "", false
	}
	return parts[0], parts[1], true
}

var (
	validContainerResourceFieldPaths = []string{
		"limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu", "requests.ephemeral-storage", "requests.memory",
	}
	hugepagesDownwardAPIPrefixes = []string{"limits.hugepages-", "requests.hugepages-"}
	cpuDivisors                  = []string{"1m", "1"}
	memoryDivisors               = []string{"1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"}
)

func validateContainerResourceFieldSelector(fs *corev1.ResourceFieldSelector, fldPath *field.Path, volume bool) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case volume && fs.ContainerName == "":
		allErrs = append(allErrs, field.Required(fldPath.Child("containerName"), ""))
	case fs.Resource == "":
		allErrs = append(allErrs, field.Required(fldPath.Child("resource"), ""))
	case !contains(validContainerResourceFieldPaths, fs.Resource):
		prefixed := false
		for _, prefix := range hugepagesDownwardAPIPrefixes {
			if strings.HasPrefix(fs.Resource, prefix) {
				prefixed = true
			}
		}
		if !prefixed {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("resource"), fs.Resource, validContainerResourceFieldPaths))
		}
	}
	return append(allErrs, validateContainerResourceDivisor(fs.Resource, fs.Divisor, fldPath)...)
}

func validateContainerResourceDivisor(name string, divisor resource.Quantity, fldPath *field.Path) field.ErrorList {
	if divisor.Cmp(resource.Quantity{}) == 0 {
		return nil
	}
	d := divisor.String()
	var allErrs field.ErrorList
	switch name {
	case "limits.cpu", "requests.cpu":
		if !contains(cpuDivisors, d) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("divisor"), name, "only divisor's values 1m and 1 are supported with the cpu resource"))
		}
	case "limits.memory", "requests.memory":
		if !contains(memoryDivisors, d) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("divisor"), name, "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the memory resource"))
		}
	case "limits.ephemeral-storage", "requests.ephemeral-storage":
		if !contains(memoryDivisors, d) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("divisor"), name, "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the local ephemeral storage resource"))
		}
	}
	if strings.HasPrefix(name, "requests.hugepages-") || strings.HasPrefix(name, "limits.hugepages-") {
		if !contains(memoryDivisors, d) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("divisor"), name, "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the hugepages resource"))
		}
	}
	return allErrs
}

// ValidateEnvFrom checks envFrom sources: prefixes, and exactly one of a
// configMap or secret reference.
func ValidateEnvFrom(sources []corev1.EnvFromSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, ev := range sources {
		p := fldPath.Index(i)
		if ev.Prefix != "" {
			for _, msg := range validation.IsRelaxedEnvVarName(ev.Prefix) {
				allErrs = append(allErrs, field.Invalid(p.Child("prefix"), ev.Prefix, msg))
			}
		}
		n := 0
		if ev.ConfigMapRef != nil {
			n++
			allErrs = append(allErrs, validateEnvSourceName(ev.ConfigMapRef.Name, validateConfigMapName, p.Child("configMapRef"))...)
		}
		if ev.SecretRef != nil {
			n++
			allErrs = append(allErrs, validateEnvSourceName(ev.SecretRef.Name, validateSecretName, p.Child("secretRef"))...)
		}
		if n == 0 {
			allErrs = append(allErrs, field.Invalid(fldPath, "", "must specify one of: `configMapRef` or `secretRef`"))
		} else if n > 1 {
			allErrs = append(allErrs, field.Invalid(fldPath, "", "may not have more than one field specified at a time"))
		}
	}
	return allErrs
}

func validateEnvSourceName(name string, fn func(string, bool) []string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath.Child("name"), "")}
	}
	var allErrs field.ErrorList
	for _, msg := range fn(name, true) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), name, msg))
	}
	return allErrs
}

// validateVolumeMounts checks mounts: an existing volume, a unique mount
// path, no overlap with devices, subPath rules, propagation and
// recursive read-only.
func validateVolumeMounts(mounts []corev1.VolumeMount, devices map[string]string, volumes map[string]corev1.VolumeSource, c *corev1.Container, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	mountPoints := map[string]bool{}
	for i, m := range mounts {
		p := fldPath.Index(i)
		if m.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		}
		if _, ok := volumes[m.Name]; !ok {
			allErrs = append(allErrs, field.NotFound(p.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			allErrs = append(allErrs, field.Required(p.Child("mountPath"), ""))
		}
		if mountPoints[m.MountPath] {
			allErrs = append(allErrs, field.Invalid(p.Child("mountPath"), m.MountPath, "must be unique"))
		}
		mountPoints[m.MountPath] = true
		if _, ok := devices[m.Name]; ok {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), m.Name, "must not already exist in volumeDevices"))
		}
		for _, dp := range devices {
			if dp == m.MountPath {
				allErrs = append(allErrs, field.Invalid(p.Child("mountPath"), m.MountPath, "must not already exist as a path in volumeDevices"))
				break
			}
		}
		if v, ok := volumes[m.Name]; ok && v.Image != nil {
			if m.SubPath != "" {
				allErrs = append(allErrs, field.Invalid(p.Child("subPath"), m.SubPath, "not allowed in image volume sources"))
			}
			if m.SubPathExpr != "" {
				allErrs = append(allErrs, field.Invalid(p.Child("subPathExpr"), m.SubPathExpr, "not allowed in image volume sources"))
			}
		}
		// Upstream reports the subPath errors at the list's path.
		if m.SubPath != "" {
			allErrs = append(allErrs, validateLocalDescendingPath(m.SubPath, fldPath.Child("subPath"))...)
		}
		if m.SubPathExpr != "" {
			if m.SubPath != "" {
				allErrs = append(allErrs, field.Invalid(p.Child("subPathExpr"), m.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
			}
			allErrs = append(allErrs, validateLocalDescendingPath(m.SubPathExpr, fldPath.Child("subPathExpr"))...)
		}
		if m.MountPropagation != nil {
			allErrs = append(allErrs, validateMountPropagation(*m.MountPropagation, c, fldPath.Child("mountPropagation"))...)
		}
		allErrs = append(allErrs, validateMountRecursiveReadOnly(m, fldPath.Child("recursiveReadOnly"))...)
	}
	return allErrs
}

var supportedMountPropagations = []corev1.MountPropagationMode{corev1.MountPropagationBidirectional, corev1.MountPropagationHostToContainer, corev1.MountPropagationNone}

func validateMountPropagation(mode corev1.MountPropagationMode, c *corev1.Container, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if !contains(supportedMountPropagations, mode) {
		allErrs = append(allErrs, field.NotSupported(fldPath, mode, supportedMountPropagations))
	}
	privileged := c.SecurityContext != nil && ptrValue(c.SecurityContext.Privileged)
	if mode == corev1.MountPropagationBidirectional && !privileged {
		allErrs = append(allErrs, field.Forbidden(fldPath, "Bidirectional mount propagation is available only to privileged containers"))
	}
	return allErrs
}

func validateMountRecursiveReadOnly(m corev1.VolumeMount, fldPath *field.Path) field.ErrorList {
	if m.RecursiveReadOnly == nil {
		return nil
	}
	var allErrs field.ErrorList
	switch *m.RecursiveReadOnly {
	case corev1.RecursiveReadOnlyDisabled:
	case corev1.RecursiveReadOnlyEnabled, corev1.RecursiveReadOnlyIfPossible:
		if !m.ReadOnly {
			allErrs = append(allErrs, field.Forbidden(fldPath, "may only be specified when readOnly is true"))
		}
		if m.MountPropagation != nil && *m.MountPropagation != corev1.MountPropagationNone {
			allErrs = append(allErrs, field.Forbidden(fldPath, "may only be specified when mountPropagation is None or not specified"))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath, *m.RecursiveReadOnly,
			[]corev1.RecursiveReadOnlyMode{corev1.RecursiveReadOnlyDisabled, corev1.RecursiveReadOnlyEnabled, corev1.RecursiveReadOnlyIfPossible}))
	}
	return allErrs
}

// validateVolumeDevices checks block devices: a claim-backed volume, a
// unique name and path without "..", no overlap with mounts.
func validateVolumeDevices(devices []corev1.VolumeDevice, mounts map[string]string, volumes map[string]corev1.VolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	paths, names := map[string]bool{}, map[string]bool{}
	for i, d := range devices {
		p := fldPath.Index(i)
		src, matched := volumes[d.Name]
		isPVC := matched && (src.PersistentVolumeClaim != nil || src.Ephemeral != nil)
		if d.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		}
		if names[d.Name] {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), d.Name, "must be unique"))
		}
		if matched && !isPVC {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), d.Name, "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"))
		}
		if !matched {
			allErrs = append(allErrs, field.NotFound(p.Child("name"), d.Name))
		}
		if d.DevicePath == "" {
			allErrs = append(allErrs, field.Required(p.Child("devicePath"), ""))
		}
		if paths[d.DevicePath] {
			allErrs = append(allErrs, field.Invalid(p.Child("devicePath"), d.DevicePath, "must be unique"))
		}
		if d.DevicePath != "" && len(validatePathNoBacksteps(d.DevicePath, nil)) > 0 {
			allErrs = append(allErrs, field.Invalid(p.Child("devicePath"), d.DevicePath, "can not contain backsteps ('..')"))
		} else {
			paths[d.DevicePath] = true
		}
		if _, ok := mounts[d.Name]; ok {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), d.Name, "must not already exist in volumeMounts"))
		}
		for _, mp := range mounts {
			if mp == d.DevicePath {
				allErrs = append(allErrs, field.Invalid(p.Child("devicePath"), d.DevicePath, "must not already exist as a path in volumeMounts"))
				break
			}
		}
		if d.Name != "" {
			names[d.Name] = true
		}
	}
	return allErrs
}

var supportedPullPolicies = []corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever}

func validatePullPolicy(policy corev1.PullPolicy, fldPath *field.Path) field.ErrorList {
	switch policy {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
		return nil
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	}
	return field.ErrorList{field.NotSupported(fldPath, policy, supportedPullPolicies)}
}

func validateResizePolicy(policies []corev1.ContainerResizePolicy, fldPath *field.Path, podRestartPolicy corev1.RestartPolicy) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[corev1.ResourceName]bool{}
	resources := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}
	restarts := []corev1.ResourceResizeRestartPolicy{corev1.NotRequired, corev1.RestartContainer}
	for i, p := range policies {
		if seen[p.ResourceName] {
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), p.ResourceName))
		}
		seen[p.ResourceName] = true
		switch p.ResourceName {
		case corev1.ResourceCPU, corev1.ResourceMemory:
		case "":
			allErrs = append(allErrs, field.Required(fldPath, ""))
		default:
			allErrs = append(allErrs, field.NotSupported(fldPath, p.ResourceName, resources))
		}
		switch p.RestartPolicy {
		case corev1.NotRequired, corev1.RestartContainer:
		case "":
			allErrs = append(allErrs, field.Required(fldPath, ""))
		default:
			allErrs = append(allErrs, field.NotSupported(fldPath, p.RestartPolicy, restarts))
		}
		if podRestartPolicy == corev1.RestartPolicyNever && p.RestartPolicy != corev1.NotRequired {
			allErrs = append(allErrs, field.Invalid(fldPath, p.RestartPolicy, "must be 'NotRequired' when pod `restartPolicy` is 'Never'"))
		}
	}
	return allErrs
}

// Probes and handlers.

func validateProbes(c *corev1.Container, gracePeriod *int64, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if pr := c.LivenessProbe; pr != nil {
		allErrs = append(allErrs, validateProbe(pr, gracePeriod, p.Child("livenessProbe"))...)
		if pr.SuccessThreshold != 1 {
			allErrs = append(allErrs, field.Invalid(p.Child("livenessProbe").Child("successThreshold"), pr.SuccessThreshold, "must be 1"))
		}
	}
	if pr := c.ReadinessProbe; pr != nil {
		allErrs = append(allErrs, validateProbe(pr, gracePeriod, p.Child("readinessProbe"))...)
		if pr.TerminationGracePeriodSeconds != nil {
			allErrs = append(allErrs, field.Invalid(p.Child("readinessProbe").Child("terminationGracePeriodSeconds"), pr.TerminationGracePeriodSeconds, "must not be set for readinessProbes"))
		}
	}
	if pr := c.StartupProbe; pr != nil {
		allErrs = append(allErrs, validateProbe(pr, gracePeriod, p.Child("startupProbe"))...)
		if pr.SuccessThreshold != 1 {
			allErrs = append(allErrs, field.Invalid(p.Child("startupProbe").Child("successThreshold"), pr.SuccessThreshold, "must be 1"))
		}
	}
	return allErrs
}

func validateProbe(pr *corev1.Probe, gracePeriod *int64, p *field.Path) field.ErrorList {
	h := handler{Exec: pr.Exec, HTTPGet: pr.HTTPGet, TCPSocket: pr.TCPSocket, GRPC: pr.GRPC}
	allErrs := validateHandler(h, gracePeriod, p)
	for _, f := range []struct {
		name  string
		value int32
	}{
		{"initialDelaySeconds", pr.InitialDelaySeconds}, {"timeoutSeconds", pr.TimeoutSeconds}, {"periodSeconds", pr.PeriodSeconds},
		{"successThreshold", pr.SuccessThreshold}, {"failureThreshold", pr.FailureThreshold},
	} {
		if f.value < 0 {
			allErrs = append(allErrs, field.Invalid(p.Child(f.name), int64(f.value), isNegativeErrorMsg))
		}
	}
	if pr.TerminationGracePeriodSeconds != nil && *pr.TerminationGracePeriodSeconds <= 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("terminationGracePeriodSeconds"), *pr.TerminationGracePeriodSeconds, "must be greater than 0"))
	}
	return allErrs
}

// handler is the union of probe and lifecycle handlers.
type handler struct {
	Exec      *corev1.ExecAction
	HTTPGet   *corev1.HTTPGetAction
	TCPSocket *corev1.TCPSocketAction
	GRPC      *corev1.GRPCAction
	Sleep     *corev1.SleepAction
}

func validateLifecycle(l *corev1.Lifecycle, gracePeriod *int64, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, lh := range []struct {
		name string
		h    *corev1.LifecycleHandler
	}{{"postStart", l.PostStart}, {"preStop", l.PreStop}} {
		if lh.h != nil {
			allErrs = append(allErrs, validateHandler(handler{Exec: lh.h.Exec, HTTPGet: lh.h.HTTPGet, TCPSocket: lh.h.TCPSocket, Sleep: lh.h.Sleep}, gracePeriod, p.Child(lh.name))...)
		}
	}
	return allErrs
}

// validateHandler requires exactly one handler type and validates it.
func validateHandler(h handler, gracePeriod *int64, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	n := 0
	one := func(set bool, name string, validate func() field.ErrorList) {
		if !set {
			return
		}
		if n > 0 {
			allErrs = append(allErrs, field.Forbidden(p.Child(name), "may not specify more than 1 handler type"))
			return
		}
		n++
		allErrs = append(allErrs, validate()...)
	}
	one(h.Exec != nil, "exec", func() field.ErrorList {
		if len(h.Exec.Command) == 0 {
			return field.ErrorList{field.Required(p.Child("exec").Child("command"), "")}
		}
		return nil
	})
	one(h.HTTPGet != nil, "httpGet", func() field.ErrorList { return validateHTTPGetAction(h.HTTPGet, p.Child("httpGet")) })
	one(h.TCPSocket != nil, "tcpSocket", func() field.ErrorList {
		return ValidatePortNumOrName(h.TCPSocket.Port, p.Child("tcpSocket").Child("port"))
	})
	one(h.GRPC != nil, "grpc", func() field.ErrorList {
		return ValidatePortNumOrName(intstr.FromInt32(h.GRPC.Port), p.Child("grpc").Child("port"))
	})
	one(h.Sleep != nil, "sleep", func() field.ErrorList {
		// AllowPodLifecycleSleepActionZeroValue is on by default: 0 is a
		// valid sleep.
		if gracePeriod != nil && (h.Sleep.Seconds < 0 || h.Sleep.Seconds > *gracePeriod) {
			return field.ErrorList{field.Invalid(p.Child("sleep"), h.Sleep.Seconds,
				fmt.Sprintf("must be non-negative and less than terminationGracePeriodSeconds (%d)", *gracePeriod))}
		}
		return nil
	})
	if n == 0 {
		allErrs = append(allErrs, field.Required(p, "must specify a handler type"))
	}
	return allErrs
}

func validateHTTPGetAction(h *corev1.HTTPGetAction, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if h.Path == "" {
		allErrs = append(allErrs, field.Required(p.Child("path"), ""))
	}
	allErrs = append(allErrs, ValidatePortNumOrName(h.Port, p.Child("port"))...)
	schemes := []corev1.URIScheme{corev1.URISchemeHTTP, corev1.URISchemeHTTPS}
	if !contains(schemes, h.Scheme) {
		allErrs = append(allErrs, field.NotSupported(p.Child("scheme"), h.Scheme, schemes))
	}
	for _, header := range h.HTTPHeaders {
		for _, msg := range validation.IsHTTPHeaderName(header.Name) {
			allErrs = append(allErrs, field.Invalid(p.Child("httpHeaders"), header.Name, msg))
		}
	}
	return allErrs
}

// ValidatePortNumOrName checks a port given as a number (1-65535) or a
// name (IANA service name).
func ValidatePortNumOrName(port intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch port.Type {
	case intstr.Int:
		for _, msg := range validation.IsValidPortNum(port.IntValue()) {
			allErrs = append(allErrs, field.Invalid(fldPath, port.IntValue(), msg))
		}
	case intstr.String:
		for _, msg := range validation.IsValidPortName(port.StrVal) {
			allErrs = append(allErrs, field.Invalid(fldPath, port.StrVal, msg))
		}
	default:
		allErrs = append(allErrs, field.InternalError(fldPath, fmt.Errorf("unknown type: %v", port.Type)))
	}
	return allErrs
}
