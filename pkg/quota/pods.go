package quota

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	defaultscorev1 "github.com/kapi-dev/kapi/pkg/api/defaults/corev1"
)

// podResources are the pod evaluator's fixed names.
var podResources = []corev1.ResourceName{
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
	corev1.ResourcePods, "count/pods",
}

// constrained are the names whose quota requires every container to say
// its request or limit (upstream's validationSet).
var constrained = []corev1.ResourceName{
	corev1.ResourceCPU, corev1.ResourceMemory,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory,
}

type podEvaluator struct{}

func (podEvaluator) MatchingResources(names []corev1.ResourceName) []corev1.ResourceName {
	out := intersect(names, podResources)
	for _, n := range names {
		s := string(n)
		if strings.HasPrefix(s, corev1.ResourceHugePagesPrefix) || strings.HasPrefix(s, corev1.ResourceRequestsHugePagesPrefix) || isExtendedForQuota(n) {
			out = append(out, n)
		}
	}
	return out
}

func asPod(obj runtime.Object) (*corev1.Pod, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("expected a pod, got %T", obj)
	}
	return pod, nil
}

// Usage: count/pods always (it counts every pod stored); the compute
// resources and "pods" only while the pod is not terminal.
func (podEvaluator) Usage(obj runtime.Object, now time.Time) (corev1.ResourceList, error) {
	pod, err := asPod(obj)
	if err != nil {
		return nil, err
	}
	out := corev1.ResourceList{"count/pods": one()}
	if !Counts(pod, now) {
		return out, nil
	}
	return Add(out, computeUsage(PodRequests(pod), PodLimits(pod))), nil
}

// Counts reports whether a pod's compute resources count (upstream's
// QuotaV1Pod): not Succeeded or Failed, and not past the end of its
// deletion grace period.
func Counts(pod *corev1.Pod, now time.Time) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	if pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil {
		end := pod.DeletionTimestamp.Add(time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second)
		if now.After(end) {
			return false
		}
	}
	return true
}

// computeUsage maps requests and limits to quota names (upstream's
// podComputeUsageHelper).
func computeUsage(requests, limits corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{corev1.ResourcePods: one()}
	if q, ok := requests[corev1.ResourceCPU]; ok {
		out[corev1.ResourceCPU] = q.DeepCopy()
		out[corev1.ResourceRequestsCPU] = q.DeepCopy()
	}
	if q, ok := limits[corev1.ResourceCPU]; ok {
		out[corev1.ResourceLimitsCPU] = q.DeepCopy()
	}
	if q, ok := requests[corev1.ResourceMemory]; ok {
		out[corev1.ResourceMemory] = q.DeepCopy()
		out[corev1.ResourceRequestsMemory] = q.DeepCopy()
	}
	if q, ok := limits[corev1.ResourceMemory]; ok {
		out[corev1.ResourceLimitsMemory] = q.DeepCopy()
	}
	if q, ok := requests[corev1.ResourceEphemeralStorage]; ok {
		out[corev1.ResourceEphemeralStorage] = q.DeepCopy()
		out[corev1.ResourceRequestsEphemeralStorage] = q.DeepCopy()
	}
	if q, ok := limits[corev1.ResourceEphemeralStorage]; ok {
		out[corev1.ResourceLimitsEphemeralStorage] = q.DeepCopy()
	}
	for name, q := range requests {
		if strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
			out[name] = q.DeepCopy()
			out[corev1.ResourceName(corev1.DefaultResourceRequestsPrefix+string(name))] = q.DeepCopy()
		}
		if isExtended(name) {
			out[corev1.ResourceName(corev1.DefaultResourceRequestsPrefix+string(name))] = q.DeepCopy()
		}
	}
	return out
}

// PodRequests is what a pod requests (upstream's resourcehelper
// PodRequests): the sum of its containers and restartable (sidecar) init
// containers, at least what any init container needs beside the sidecars
// started before it, plus the overhead; pod-level requests replace the
// containers' for the resources they set.
func PodRequests(pod *corev1.Pod) corev1.ResourceList {
	return aggregate(pod, func(c *corev1.Container) corev1.ResourceList { return c.Resources.Requests }, true, podLevel(pod, true))
}

// PodLimits is a pod's limits, aggregated as PodRequests; the overhead is
// added only to resources that have a limit.
func PodLimits(pod *corev1.Pod) corev1.ResourceList {
	return aggregate(pod, func(c *corev1.Container) corev1.ResourceList { return c.Resources.Limits }, false, podLevel(pod, false))
}

func podLevel(pod *corev1.Pod, requests bool) corev1.ResourceList {
	if pod.Spec.Resources == nil {
		return nil
	}
	if requests {
		return pod.Spec.Resources.Requests
	}
	return pod.Spec.Resources.Limits
}

func aggregate(pod *corev1.Pod, of func(*corev1.Container) corev1.ResourceList, requests bool, podLevel corev1.ResourceList) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for i := range pod.Spec.Containers {
		sum = Add(sum, of(&pod.Spec.Containers[i]))
	}
	sidecars := corev1.ResourceList{}
	initMax := corev1.ResourceList{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sum = Add(sum, of(c))
			sidecars = Add(sidecars, of(c))
			setMax(initMax, sidecars)
			continue
		}
		setMax(initMax, Add(of(c), sidecars))
	}
	setMax(sum, initMax)
	// Pod-level cpu and memory replace the containers' (PodLevelResources).
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := podLevel[name]; ok {
			sum[name] = q.DeepCopy()
		}
	}
	for name, q := range pod.Spec.Overhead {
		v, ok := sum[name]
		switch {
		case ok:
			v.Add(q)
			sum[name] = v
		case requests:
			sum[name] = q.DeepCopy()
		}
	}
	return sum
}

// setMax raises dst's values to src's.
func setMax(dst, src corev1.ResourceList) {
	for name, q := range src {
		if v, ok := dst[name]; !ok || q.Cmp(v) > 0 {
			dst[name] = q.DeepCopy()
		}
	}
}

func (podEvaluator) MatchesScope(sel corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error) {
	pod, err := asPod(obj)
	if err != nil {
		return false, err
	}
	switch sel.ScopeName {
	case corev1.ResourceQuotaScopeTerminating:
		return terminating(pod), nil
	case corev1.ResourceQuotaScopeNotTerminating:
		return !terminating(pod), nil
	case corev1.ResourceQuotaScopeBestEffort:
		return defaultscorev1.PodQOSClass(pod) == corev1.PodQOSBestEffort, nil
	case corev1.ResourceQuotaScopeNotBestEffort:
		return defaultscorev1.PodQOSClass(pod) != corev1.PodQOSBestEffort, nil
	case corev1.ResourceQuotaScopePriorityClass:
		if sel.Operator == corev1.ScopeSelectorOpExists {
			return pod.Spec.PriorityClassName != "", nil
		}
		return selectorMatches(sel, pod.Spec.PriorityClassName)
	case corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return crossNamespaceAffinity(pod), nil
	}
	return false, nil
}

func terminating(pod *corev1.Pod) bool {
	return pod.Spec.ActiveDeadlineSeconds != nil && *pod.Spec.ActiveDeadlineSeconds >= 0
}

// crossNamespaceAffinity: a pod (anti-)affinity term with namespaces or a
// namespace selector.
func crossNamespaceAffinity(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	if a == nil {
		return false
	}
	cross := func(t corev1.PodAffinityTerm) bool { return len(t.Namespaces) > 0 || t.NamespaceSelector != nil }
	var terms []corev1.PodAffinityTerm
	if a.PodAffinity != nil {
		terms = append(terms, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	if a.PodAntiAffinity != nil {
		terms = append(terms, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	return slices.ContainsFunc(terms, cross)
}

// Constraints: a quota on cpu or memory (requests or limits) requires
// every container and init container to state it (upstream's
// podEvaluator.Constraints and its message).
func (podEvaluator) Constraints(required []corev1.ResourceName, obj runtime.Object) error {
	pod, err := asPod(obj)
	if err != nil {
		return err
	}
	need := intersect(required, constrained)
	if len(need) == 0 {
		return nil
	}
	missing := map[corev1.ResourceName][]string{}
	check := func(c *corev1.Container) {
		have := computeUsage(c.Resources.Requests, c.Resources.Limits)
		for _, n := range need {
			if _, ok := have[n]; !ok {
				missing[n] = append(missing[n], c.Name)
			}
		}
	}
	for i := range pod.Spec.InitContainers {
		check(&pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		check(&pod.Spec.Containers[i])
	}
	if len(missing) == 0 {
		return nil
	}
	var msgs []string
	for _, n := range Names(toList(missing)) {
		names := slices.Clone(missing[n])
		slices.Sort(names)
		msgs = append(msgs, fmt.Sprintf("%s for: %s", n, strings.Join(slices.Compact(names), ",")))
	}
	return errors.New("must specify " + strings.Join(msgs, "; "))
}

func toList(m map[corev1.ResourceName][]string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k := range m {
		out[k] = one()
	}
	return out
}

func (podEvaluator) ChargesUpdates() bool { return false }
