package quota

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
)

var serviceResources = []corev1.ResourceName{
	"count/services", corev1.ResourceServices, corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
}

// serviceEvaluator charges services, load balancers and node ports
// (upstream's serviceEvaluator).
type serviceEvaluator struct{}

func (serviceEvaluator) MatchingResources(names []corev1.ResourceName) []corev1.ResourceName {
	return intersect(names, serviceResources)
}

func (serviceEvaluator) Usage(obj runtime.Object, _ time.Time) (corev1.ResourceList, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, fmt.Errorf("expected a service, got %T", obj)
	}
	out := corev1.ResourceList{"count/services": one(), corev1.ResourceServices: one()}
	ports := int64(len(svc.Spec.Ports))
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		out[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
	case corev1.ServiceTypeLoadBalancer:
		// Without node port allocation only explicit node ports count.
		if svc.Spec.AllocateLoadBalancerNodePorts != nil && !*svc.Spec.AllocateLoadBalancerNodePorts {
			ports = 0
			for _, p := range svc.Spec.Ports {
				if p.NodePort != 0 {
					ports++
				}
			}
		}
		out[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
		out[corev1.ResourceServicesLoadBalancers] = one()
	}
	return out, nil
}

func (serviceEvaluator) MatchesScope(corev1.ScopedResourceSelectorRequirement, runtime.Object) (bool, error) {
	return false, nil
}
func (serviceEvaluator) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }
func (serviceEvaluator) ChargesUpdates() bool                                    { return true }

// StorageClassSuffix joins a storage class name and a claim resource in
// per-class quota names (<class>.storageclass.storage.k8s.io/requests.storage).
const StorageClassSuffix = ".storageclass.storage.k8s.io/"

// pvcEvaluator charges claims and their storage requests, overall and per
// storage class (upstream's pvcEvaluator).
type pvcEvaluator struct{}

func (pvcEvaluator) MatchingResources(names []corev1.ResourceName) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, n := range names {
		switch n {
		case "count/persistentvolumeclaims", corev1.ResourcePersistentVolumeClaims, corev1.ResourceRequestsStorage:
			out = append(out, n)
		default:
			if _, res, ok := cutClass(n); ok && (res == string(corev1.ResourcePersistentVolumeClaims) || res == string(corev1.ResourceRequestsStorage)) {
				out = append(out, n)
			}
		}
	}
	return out
}

func cutClass(n corev1.ResourceName) (class, res string, ok bool) {
	s := string(n)
	for i := 0; i+len(StorageClassSuffix) <= len(s); i++ {
		if s[i:i+len(StorageClassSuffix)] == StorageClassSuffix {
			return s[:i], s[i+len(StorageClassSuffix):], true
		}
	}
	return "", "", false
}

func (pvcEvaluator) Usage(obj runtime.Object, _ time.Time) (corev1.ResourceList, error) {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return nil, fmt.Errorf("expected a persistentvolumeclaim, got %T", obj)
	}
	out := corev1.ResourceList{"count/persistentvolumeclaims": one(), corev1.ResourcePersistentVolumeClaims: one()}
	class := pvc.Annotations[corev1.BetaStorageClassAnnotation]
	if class == "" && pvc.Spec.StorageClassName != nil {
		class = *pvc.Spec.StorageClassName
	}
	if class != "" {
		out[corev1.ResourceName(class+StorageClassSuffix+string(corev1.ResourcePersistentVolumeClaims))] = one()
	}
	if req, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
		rounded := req.DeepCopy()
		rounded.RoundUp(0)
		out[corev1.ResourceRequestsStorage] = rounded
		if class != "" {
			out[corev1.ResourceName(class+StorageClassSuffix+string(corev1.ResourceRequestsStorage))] = rounded.DeepCopy()
		}
	}
	return out, nil
}

func (pvcEvaluator) MatchesScope(corev1.ScopedResourceSelectorRequirement, runtime.Object) (bool, error) {
	return false, nil
}
func (pvcEvaluator) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }
func (pvcEvaluator) ChargesUpdates() bool                                    { return true }
