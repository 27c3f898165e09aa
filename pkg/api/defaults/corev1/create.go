package corev1

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// What kube-apiserver's pod strategy fills in when a pod is created
// (upstream's podStrategy.PrepareForCreate, pkg/registry/core/pod,
// v1.37), beyond the decoding defaults. Feature gates are taken at their
// v1.37 defaults: MatchLabelKeysInPodAffinity and
// MatchLabelKeysInPodTopologySpread(SelectorMerge) on.

// PrepareForCreate fills in what the API server sets on a new pod: the
// generation (1), the pod-level resources ([DefaultPodLevelResources]), a
// fresh status with phase Pending and the QoS class
// (one given on create is kept, as upstream's GetPodQOS does), the
// PodScheduled=False condition of a pod with scheduling gates, the label
// selectors implied by matchLabelKeys/mismatchLabelKeys of pod
// (anti-)affinity terms and topology spread constraints, and AppArmor
// profile fields from the deprecated per-container annotations. It
// returns the warnings for the client (deprecated AppArmor annotations).
func PrepareForCreate(pod *corev1.Pod) []string {
	pod.Generation = 1
	DefaultPodLevelResources(pod)
	qos := pod.Status.QOSClass
	if qos == "" {
		qos = PodQOSClass(pod)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: qos}
	applySchedulingGatedCondition(pod)
	mutatePodAffinity(pod)
	mutateTopologySpreadConstraints(pod)
	return applyAppArmorVersionSkew(pod)
}

// applySchedulingGatedCondition adds PodScheduled=False (reason
// SchedulingGated) to a pod with scheduling gates and no PodScheduled
// condition.
func applySchedulingGatedCondition(pod *corev1.Pod) {
	if len(pod.Spec.SchedulingGates) == 0 {
		return
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
		Type:               corev1.PodScheduled,
		Status:             corev1.ConditionFalse,
		Reason:             corev1.PodReasonSchedulingGated,
		Message:            "Scheduling is blocked due to non-empty scheduling gates",
		LastTransitionTime: metav1.Now(),
	})
}

// mutatePodAffinity merges, into each pod (anti-)affinity term with a
// label selector, "key in (value)" for its matchLabelKeys and "key notin
// (value)" for its mismatchLabelKeys, for the keys the pod has.
func mutatePodAffinity(pod *corev1.Pod) {
	a := pod.Spec.Affinity
	if a == nil {
		return
	}
	apply := func(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm) {
		for i := range preferred {
			applyAffinityLabelKeys(&preferred[i].PodAffinityTerm, pod.Labels)
		}
		for i := range required {
			applyAffinityLabelKeys(&required[i], pod.Labels)
		}
	}
	if a.PodAffinity != nil {
		apply(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if a.PodAntiAffinity != nil {
		apply(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	}
}

func applyAffinityLabelKeys(term *corev1.PodAffinityTerm, podLabels map[string]string) {
	if term.LabelSelector == nil || len(term.MatchLabelKeys) == 0 && len(term.MismatchLabelKeys) == 0 {
		return
	}
	addLabelKeyRequirements(term.LabelSelector, term.MatchLabelKeys, metav1.LabelSelectorOpIn, podLabels)
	addLabelKeyRequirements(term.LabelSelector, term.MismatchLabelKeys, metav1.LabelSelectorOpNotIn, podLabels)
}

// mutateTopologySpreadConstraints merges "key in (value)" into each
// constraint's label selector for its matchLabelKeys.
func mutateTopologySpreadConstraints(pod *corev1.Pod) {
	for i := range pod.Spec.TopologySpreadConstraints {
		c := &pod.Spec.TopologySpreadConstraints[i]
		if c.LabelSelector == nil || len(c.MatchLabelKeys) == 0 {
			continue
		}
		addLabelKeyRequirements(c.LabelSelector, c.MatchLabelKeys, metav1.LabelSelectorOpIn, pod.Labels)
	}
}

func addLabelKeyRequirements(sel *metav1.LabelSelector, keys []string, op metav1.LabelSelectorOperator, podLabels map[string]string) {
	for _, key := range keys {
		if v, ok := podLabels[key]; ok {
			sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: key, Operator: op, Values: []string{v}})
		}
	}
}

// applyAppArmorVersionSkew copies each container's deprecated AppArmor
// annotation into its securityContext.appArmorProfile when the container
// sets none and the annotation differs from the pod's profile; it warns
// about each such annotation (and about one that names no valid profile).
// Windows pods are left alone.
func applyAppArmorVersionSkew(pod *corev1.Pod) []string {
	if pod.Spec.OS != nil && pod.Spec.OS.Name == corev1.Windows {
		return nil
	}
	var podProfile *corev1.AppArmorProfile
	if pod.Spec.SecurityContext != nil {
		podProfile = pod.Spec.SecurityContext.AppArmorProfile
	}
	var warnings []string
	visit := func(c *corev1.Container) {
		key := corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + c.Name
		annotation, ok := pod.Annotations[key]
		if !ok || c.SecurityContext != nil && c.SecurityContext.AppArmorProfile != nil {
			return
		}
		profile := appArmorProfileForAnnotation(annotation)
		warn := profile == nil
		if profile != nil && !equality.Semantic.DeepEqual(profile, podProfile) {
			if c.SecurityContext == nil {
				c.SecurityContext = &corev1.SecurityContext{}
			}
			c.SecurityContext.AppArmorProfile = profile
			warn = true
		}
		if warn {
			warnings = append(warnings, fmt.Sprintf(`%s: deprecated since v1.30; use the "appArmorProfile" field instead`,
				field.NewPath("metadata", "annotations").Key(key)))
		}
	}
	for i := range pod.Spec.InitContainers {
		visit(&pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		visit(&pod.Spec.Containers[i])
	}
	for i := range pod.Spec.EphemeralContainers {
		visit((*corev1.Container)(&pod.Spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	return warnings
}

// maxLocalhostProfileLength is the longest AppArmor localhost profile name
// (PATH_MAX - 1).
const maxLocalhostProfileLength = 4095

// appArmorProfileForAnnotation is the profile a deprecated AppArmor
// annotation value names ("unconfined", "runtime/default",
// "localhost/<profile>"), or nil when it names no valid one.
func appArmorProfileForAnnotation(value string) *corev1.AppArmorProfile {
	switch {
	case value == corev1.DeprecatedAppArmorBetaProfileNameUnconfined:
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
	case value == corev1.DeprecatedAppArmorBetaProfileRuntimeDefault:
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}
	case strings.HasPrefix(value, corev1.DeprecatedAppArmorBetaProfileNamePrefix):
		name := strings.TrimPrefix(value, corev1.DeprecatedAppArmorBetaProfileNamePrefix)
		if name == "" || strings.TrimSpace(name) != name || len(name) > maxLocalhostProfileLength {
			return nil
		}
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: &name}
	}
	return nil
}
