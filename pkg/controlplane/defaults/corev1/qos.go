package corev1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// PodQOSClass computes a pod's QoS class as the API server does on create
// (upstream's ComputePodQOS, with PodLevelResources and
// PodLevelResourcesFixKubeletQOSClass at their v1.37 defaults): from the
// pod-level resources when they set cpu, memory or hugepages, else from
// every container and init container (ephemeral containers have no
// resources). Only cpu and memory count. BestEffort: nothing requested or
// limited; Guaranteed: cpu and memory limited everywhere and requests
// equal to limits; Burstable otherwise.
func PodQOSClass(pod *corev1.Pod) corev1.PodQOSClass {
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	guaranteed := true
	if r := pod.Spec.Resources; r != nil && (podLevelSet(r.Requests) || podLevelSet(r.Limits)) {
		addQOSResources(requests, r.Requests)
		if len(r.Limits) > 0 {
			if !addQOSResources(limits, r.Limits) {
				guaranteed = false
			}
		}
	} else {
		for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
			for i := range list {
				addQOSResources(requests, list[i].Resources.Requests)
				if !addQOSResources(limits, list[i].Resources.Limits) {
					guaranteed = false
				}
			}
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	if guaranteed {
		for name, req := range requests {
			if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
				guaranteed = false
				break
			}
		}
	}
	if guaranteed && len(requests) == len(limits) {
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

// addQOSResources adds the positive cpu and memory quantities of add to
// sum, and reports whether add had both.
func addQOSResources(sum, add corev1.ResourceList) (cpuAndMemory bool) {
	var cpu, mem bool
	for name, q := range add {
		if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
			continue
		}
		if q.Cmp(resource.Quantity{}) <= 0 {
			continue
		}
		cpu = cpu || name == corev1.ResourceCPU
		mem = mem || name == corev1.ResourceMemory
		if v, ok := sum[name]; ok {
			v.Add(q)
			sum[name] = v
		} else {
			sum[name] = q.DeepCopy()
		}
	}
	return cpu && mem
}
