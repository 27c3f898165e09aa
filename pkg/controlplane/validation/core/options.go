package core

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PodValidationOptions are upstream's PodValidationOptions that still vary
// at v1.37 (the others are fixed at their gates' defaults, see the package
// doc), plus the embedding resource's restart policy rule.
type PodValidationOptions struct {
	// AllowInvalidPodDeletionCost accepts an invalid
	// controller.kubernetes.io/pod-deletion-cost annotation (an update of
	// a pod that already had one).
	AllowInvalidPodDeletionCost bool
	// AllowInvalidLabelValueInSelector accepts invalid label values in pod
	// (anti-)affinity selectors (an update of a spec that already had
	// them).
	AllowInvalidLabelValueInSelector bool
	// AllowIndivisibleHugePagesValues accepts hugepages quantities that
	// are not a multiple of the page size.
	AllowIndivisibleHugePagesValues bool
	// AllowInvalidTopologySpreadConstraintLabelSelector skips the label
	// selector check of topology spread constraints.
	AllowInvalidTopologySpreadConstraintLabelSelector bool
	// AllowNonLocalProjectedTokenPath accepts service account token paths
	// that are absolute or contain "..".
	AllowNonLocalProjectedTokenPath bool
	// AllowNamespacedSysctlsForHostNetAndHostIPC accepts net.* and IPC
	// sysctls in pods sharing the host's network or IPC namespace.
	AllowNamespacedSysctlsForHostNetAndHostIPC bool
	// AllowInvalidLabelValueInRequiredNodeAffinity accepts invalid label
	// values in required node affinity terms.
	AllowInvalidLabelValueInRequiredNodeAffinity bool
	// AllowExistingRestartContainerForNonSidecarInitContainer accepts a
	// RestartContainer resize policy on an init container that is not a
	// sidecar (an update of a spec that already had one).
	AllowExistingRestartContainerForNonSidecarInitContainer bool
	// ResourceIsPod is set when a Pod is validated (not a template
	// embedded in another resource): host ports must equal container
	// ports with host networking, image volumes need a reference.
	ResourceIsPod bool
	// AllowPrivileged is kube-apiserver's --allow-privileged: without it,
	// privileged and Windows hostProcess containers are Forbidden
	// ("disallowed by cluster policy").
	AllowPrivileged bool
	// RestartPolicies, if not empty, are the restart policies the
	// embedding resource accepts (e.g. Always for a Deployment, OnFailure
	// and Never for a Job): any other is NotSupported at
	// <spec>.restartPolicy with these values, after the pod spec's own
	// check, as upstream's workload validation does.
	RestartPolicies []corev1.RestartPolicy
}

// DefaultPodValidationOptions are the options of a new pod or template:
// privileged containers allowed (kapi serves as clusters configure
// kube-apiserver, --allow-privileged=true), nothing else relaxed.
func DefaultPodValidationOptions() PodValidationOptions {
	return PodValidationOptions{AllowPrivileged: true}
}

// ValidationOptionsForPodSpec returns the options for a pod spec (and its
// metadata) on create (old nil) or update: upstream's
// GetValidationOptionsFromPodSpecAndMeta, which relaxes a rule an update
// would otherwise fail on because the stored object already breaks it.
func ValidationOptionsForPodSpec(spec, old *corev1.PodSpec, meta, oldMeta *metav1.ObjectMeta) PodValidationOptions {
	opts := DefaultPodValidationOptions()
	if oldMeta != nil && !deletionCostValid(oldMeta.Annotations) {
		opts.AllowInvalidPodDeletionCost = true
	}
	if old == nil {
		return opts
	}
	opts.AllowInvalidLabelValueInSelector = hasInvalidLabelValueInAffinitySelector(old)
	opts.AllowIndivisibleHugePagesValues = usesIndivisibleHugePagesValues(old)
	opts.AllowInvalidTopologySpreadConstraintLabelSelector = hasInvalidTopologySpreadSelector(old)
	opts.AllowNonLocalProjectedTokenPath = hasNonLocalProjectedTokenPath(old)
	opts.AllowNamespacedSysctlsForHostNetAndHostIPC = hasNamespacedSysctlWithHostNamespace(old)
	opts.AllowInvalidLabelValueInRequiredNodeAffinity = hasInvalidLabelValueInRequiredNodeAffinity(old)
	opts.AllowExistingRestartContainerForNonSidecarInitContainer = hasRestartContainerForNonSidecarInitContainer(old)
	return opts
}

func hasRestartContainerForNonSidecarInitContainer(spec *corev1.PodSpec) bool {
	for i := range spec.InitContainers {
		if isRestartableInitContainer(&spec.InitContainers[i]) {
			continue
		}
		for _, p := range spec.InitContainers[i].ResizePolicy {
			if p.RestartPolicy == corev1.RestartContainer {
				return true
			}
		}
	}
	return false
}

func hasInvalidLabelValueInAffinitySelector(spec *corev1.PodSpec) bool {
	a := spec.Affinity
	if a == nil {
		return false
	}
	check := func(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm) bool {
		for _, t := range required {
			if metav1validation.LabelSelectorHasInvalidLabelValue(t.LabelSelector) || metav1validation.LabelSelectorHasInvalidLabelValue(t.NamespaceSelector) {
				return true
			}
		}
		for _, t := range preferred {
			if metav1validation.LabelSelectorHasInvalidLabelValue(t.PodAffinityTerm.LabelSelector) ||
				metav1validation.LabelSelectorHasInvalidLabelValue(t.PodAffinityTerm.NamespaceSelector) {
				return true
			}
		}
		return false
	}
	if a.PodAffinity != nil && check(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution) {
		return true
	}
	return a.PodAntiAffinity != nil && check(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
}

func usesIndivisibleHugePagesValues(spec *corev1.PodSpec) bool {
	found := false
	visitContainers(spec, nil, func(c *corev1.Container, _ *field.Path) bool {
		for _, list := range []corev1.ResourceList{c.Resources.Limits, c.Resources.Requests} {
			for name, q := range list {
				if isHugePageResourceName(name) && !isHugePageValueDivisible(name, q) {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

func hasInvalidTopologySpreadSelector(spec *corev1.PodSpec) bool {
	for _, c := range spec.TopologySpreadConstraints {
		errs := metav1validation.ValidateLabelSelector(c.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, nil)
		if len(errs) > 0 {
			return true
		}
	}
	return false
}

func hasNonLocalProjectedTokenPath(spec *corev1.PodSpec) bool {
	for _, v := range spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.ServiceAccountToken != nil && len(ValidateLocalNonReservedPath(s.ServiceAccountToken.Path, nil)) > 0 {
				return true
			}
		}
	}
	return false
}

func hasNamespacedSysctlWithHostNamespace(spec *corev1.PodSpec) bool {
	if spec.SecurityContext == nil {
		return false
	}
	for _, s := range spec.SecurityContext.Sysctls {
		if hostSysctlError(s.Name, spec, nil) != nil {
			return true
		}
	}
	return false
}

func hasInvalidLabelValueInRequiredNodeAffinity(spec *corev1.PodSpec) bool {
	a := spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return false
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, req := range term.MatchExpressions {
			for _, v := range req.Values {
				if len(labelValueErrors(v)) > 0 {
					return true
				}
			}
		}
	}
	return false
}
