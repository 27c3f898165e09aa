package core

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// deprecatedNodeLabels are the node labels upstream warns about in node
// selectors and node affinity (pkg/api/node's deprecation messages).
var deprecatedNodeLabels = map[string]string{
	"beta.kubernetes.io/arch":                  `deprecated since v1.14; use "kubernetes.io/arch" instead`,
	"beta.kubernetes.io/os":                    `deprecated since v1.14; use "kubernetes.io/os" instead`,
	"failure-domain.beta.kubernetes.io/region": `deprecated since v1.17; use "topology.kubernetes.io/region" instead`,
	"failure-domain.beta.kubernetes.io/zone":   `deprecated since v1.17; use "topology.kubernetes.io/zone" instead`,
	"beta.kubernetes.io/instance-type":         `deprecated since v1.17; use "node.kubernetes.io/instance-type" instead`,
}

// PodSpecWarnings are the warnings upstream's GetWarningsForPod and
// GetWarningsForPodTemplate give for a pod's (or template's) metadata and
// spec; fieldPath is the template's path (nil for a pod). kapi reports
// this subset of them: deprecated node labels in node selectors and
// required node affinity, the non-functional seccomp annotations, a
// negative termination grace period, fractional byte quantities.
func PodSpecWarnings(meta *metav1.ObjectMeta, spec *corev1.PodSpec, fieldPath *field.Path) []string {
	var out []string
	for _, k := range sortedKeys(spec.NodeSelector) {
		if msg, ok := deprecatedNodeLabels[k]; ok {
			out = append(out, fmt.Sprintf("%s: %s", fieldPath.Child("spec", "nodeSelector").Key(k), msg))
		}
	}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		termsPath := fieldPath.Child("spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
		for i, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for j, e := range term.MatchExpressions {
				if msg, ok := deprecatedNodeLabels[e.Key]; ok {
					out = append(out, fmt.Sprintf("%s: %s is %s", termsPath.Index(i).Child("matchExpressions").Index(j).Child("key"), e.Key, msg))
				}
			}
		}
	}
	annotations := fieldPath.Child("metadata", "annotations")
	if _, ok := meta.Annotations[corev1.SeccompPodAnnotationKey]; ok {
		out = append(out, fmt.Sprintf(`%s: non-functional in v1.27+; use the "seccompProfile" field instead`, annotations.Key(corev1.SeccompPodAnnotationKey)))
	}
	keys := make([]string, 0, len(meta.Annotations))
	for k := range meta.Annotations {
		if len(k) > len(corev1.SeccompContainerAnnotationKeyPrefix) && k[:len(corev1.SeccompContainerAnnotationKeyPrefix)] == corev1.SeccompContainerAnnotationKeyPrefix {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, fmt.Sprintf(`%s: non-functional in v1.27+; use the "seccompProfile" field instead`, annotations.Key(k)))
	}
	if g := spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		out = append(out, fmt.Sprintf("%s: must be >= 0; negative values are invalid and will be treated as 1", fieldPath.Child("spec", "terminationGracePeriodSeconds")))
	}
	visitContainers(spec, fieldPath.Child("spec"), func(c *corev1.Container, p *field.Path) bool {
		for _, r := range []struct {
			name string
			list corev1.ResourceList
		}{{"limits", c.Resources.Limits}, {"requests", c.Resources.Requests}} {
			for _, name := range []corev1.ResourceName{corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
				if q, ok := r.list[name]; ok && q.MilliValue()%1000 != 0 {
					out = append(out, fmt.Sprintf("%s: fractional byte value %q is invalid, must be an integer", p.Child("resources", r.name).Key(string(name)), q.String()))
				}
			}
		}
		return true
	})
	return out
}
