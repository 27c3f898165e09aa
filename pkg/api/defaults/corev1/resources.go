package corev1

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Pod-level resources (spec.resources, the PodLevelResources feature, on by
// default since v1.34) are completed from the containers' when a pod is
// created, as v1.37's podutil.DefaultPodLevelResources does from the pod
// strategy (PodLevelResourcesFixDefaulting, beta and on in v1.37, moved it
// there from the decoding defaults): hugepage limits, then requests, then
// limits.

// supportedPodLevelResource reports whether name may be set at pod level:
// cpu, memory and hugepages-*.
func supportedPodLevelResource(name corev1.ResourceName) bool {
	return name == corev1.ResourceCPU || name == corev1.ResourceMemory || isHugePages(name)
}

func isHugePages(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// overcommitAllowed reports whether requests of name may be below its
// limits: native resources other than hugepages.
func overcommitAllowed(name corev1.ResourceName) bool {
	native := !strings.Contains(string(name), "/") || strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
	return native && !isHugePages(name)
}

// podLevelSet reports whether list holds a resource supported at pod
// level.
func podLevelSet(list corev1.ResourceList) bool {
	for name := range list {
		if supportedPodLevelResource(name) {
			return true
		}
	}
	return false
}

// DefaultPodLevelResources completes a pod's pod-level resources, if it
// sets any, from its containers' (upstream's DefaultPodLevelResources):
//  1. each hugepages limit of the containers becomes a pod-level limit,
//     unless the pod sets one or a pod-level request for it;
//  2. each missing pod-level request becomes the containers' aggregated
//     request (resources that may be overcommitted), else the pod-level
//     limit;
//  3. a pod-level request without a pod-level limit, for a resource every
//     container limits, gets the larger of the request and the
//     containers' aggregated limit as its limit.
func DefaultPodLevelResources(pod *corev1.Pod) {
	r := pod.Spec.Resources
	if r == nil || len(r.Limits) == 0 && len(r.Requests) == 0 {
		return
	}
	limits := r.Limits
	if limits == nil {
		limits = corev1.ResourceList{}
	}
	for name, q := range aggregateContainers(&pod.Spec, containerLimits) {
		if !isHugePages(name) {
			continue
		}
		if _, ok := r.Requests[name]; ok {
			continue
		}
		if _, ok := limits[name]; !ok {
			limits[name] = q.DeepCopy()
		}
	}
	if len(limits) > 0 {
		r.Limits = limits
	}

	requests := r.Requests
	if requests == nil {
		requests = corev1.ResourceList{}
	}
	for name, q := range aggregateContainers(&pod.Spec, containerRequests) {
		if _, ok := requests[name]; !ok && supportedPodLevelResource(name) && overcommitAllowed(name) {
			requests[name] = q.DeepCopy()
		}
	}
	for name, q := range r.Limits {
		if _, ok := requests[name]; !ok && supportedPodLevelResource(name) {
			requests[name] = q.DeepCopy()
		}
	}
	if len(requests) > 0 {
		r.Requests = requests
	}

	var aggregated corev1.ResourceList
	for name, req := range r.Requests {
		if !supportedPodLevelResource(name) {
			continue
		}
		if _, ok := r.Limits[name]; ok || !allContainersLimit(&pod.Spec, name) {
			continue
		}
		if aggregated == nil {
			aggregated = aggregateContainers(&pod.Spec, containerLimits)
		}
		limit, ok := aggregated[name]
		if !ok {
			continue
		}
		if req.Cmp(limit) > 0 {
			limit = req
		}
		if r.Limits == nil {
			r.Limits = corev1.ResourceList{}
		}
		r.Limits[name] = limit.DeepCopy()
	}
}

// allContainersLimit reports whether every container, init container and
// ephemeral container has a limit for name (upstream visits all of them;
// an ephemeral container has no resources).
func allContainersLimit(spec *corev1.PodSpec, name corev1.ResourceName) bool {
	if len(spec.EphemeralContainers) > 0 {
		return false
	}
	for _, list := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
		for i := range list {
			if _, ok := list[i].Resources.Limits[name]; !ok {
				return false
			}
		}
	}
	return true
}

func containerRequests(c *corev1.Container) corev1.ResourceList { return c.Resources.Requests }
func containerLimits(c *corev1.Container) corev1.ResourceList   { return c.Resources.Limits }

// aggregateContainers is what a pod's containers need of each resource
// (upstream's AggregateContainerRequests/Limits from the spec): the sum
// of the containers and sidecars (restartable init containers), or more
// if an init container, run next to the sidecars started before it,
// needs more.
func aggregateContainers(spec *corev1.PodSpec, of func(*corev1.Container) corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := range spec.Containers {
		addResources(out, of(&spec.Containers[i]))
	}
	sidecars := corev1.ResourceList{}
	initPeak := corev1.ResourceList{}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		use := of(c)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addResources(out, use)
			addResources(sidecars, use)
			use = sidecars
		} else {
			combined := corev1.ResourceList{}
			addResources(combined, use)
			addResources(combined, sidecars)
			use = combined
		}
		maxResources(initPeak, use)
	}
	maxResources(out, initPeak)
	return out
}

func addResources(list, add corev1.ResourceList) {
	for name, q := range add {
		if v, ok := list[name]; ok {
			v.Add(q)
			list[name] = v
		} else {
			list[name] = q.DeepCopy()
		}
	}
}

func maxResources(list, other corev1.ResourceList) {
	for name, q := range other {
		if v, ok := list[name]; !ok || q.Cmp(v) > 0 {
			list[name] = q.DeepCopy()
		}
	}
}
