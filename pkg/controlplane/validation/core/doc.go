// Package core validates core/v1 pods, pod templates and the pod spec every
// workload embeds, as kube-apiserver's pkg/apis/core/validation does
// (kubernetes v1.37): the same field paths, error types
// (Invalid/Required/Forbidden/NotSupported/Duplicate/NotFound/TooLong) and
// messages, since clients and tests match on them. It works on the
// versioned types of k8s.io/api (kapi has no internal versions): where
// upstream's internal types keep hostNetwork, hostPID, hostIPC, hostUsers
// and shareProcessNamespace in the pod security context, the v1 fields of
// the pod spec are read, and errors name the paths upstream names.
//
// As in pkg/controlplane/validation, kinds have two entry points:
// Validate<Kind> checks a whole object, metadata included, and
// Validate<Kind>Fields everything but the generic metadata rules, which
// the generic store (pkg/registry/generic) checks itself before it asks a
// strategy. Workload resources validate their templates with
// [ValidatePodTemplateSpec] and a [PodValidationOptions] whose
// RestartPolicies states their own restart policy rule.
//
// Feature gates are taken at their v1.37 defaults (relaxed environment
// variable names and DNS search paths, zero-second sleep actions,
// pod-level resources, sidecar resize policies, EnvFiles); fields of
// gates that are off are validated like the others rather than dropped.
// kube-apiserver's --allow-privileged is PodValidationOptions.AllowPrivileged.
package core
