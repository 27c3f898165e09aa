package resourcev1

import (
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Now is the clock of DeviceTaint.TimeAdded (a test seam).
var Now = time.Now

// RegisterDefaults registers the defaulting functions of every
// resource.k8s.io/v1 kind and list on s.
func RegisterDefaults(s *runtime.Scheme) error {
	s.AddTypeDefaultingFunc(&resourcev1.ResourceClaim{}, func(obj any) { SetObjectDefaults_ResourceClaim(obj.(*resourcev1.ResourceClaim)) })
	s.AddTypeDefaultingFunc(&resourcev1.ResourceClaimList{}, func(obj any) {
		l := obj.(*resourcev1.ResourceClaimList)
		for i := range l.Items {
			SetObjectDefaults_ResourceClaim(&l.Items[i])
		}
	})
	s.AddTypeDefaultingFunc(&resourcev1.ResourceClaimTemplate{}, func(obj any) {
		SetObjectDefaults_ResourceClaimTemplate(obj.(*resourcev1.ResourceClaimTemplate))
	})
	s.AddTypeDefaultingFunc(&resourcev1.ResourceClaimTemplateList{}, func(obj any) {
		l := obj.(*resourcev1.ResourceClaimTemplateList)
		for i := range l.Items {
			SetObjectDefaults_ResourceClaimTemplate(&l.Items[i])
		}
	})
	s.AddTypeDefaultingFunc(&resourcev1.ResourceSlice{}, func(obj any) { SetObjectDefaults_ResourceSlice(obj.(*resourcev1.ResourceSlice)) })
	s.AddTypeDefaultingFunc(&resourcev1.ResourceSliceList{}, func(obj any) {
		l := obj.(*resourcev1.ResourceSliceList)
		for i := range l.Items {
			SetObjectDefaults_ResourceSlice(&l.Items[i])
		}
	})
	return nil
}

// SetDefaults_ExactDeviceRequest: ExactCount, count 1.
func SetDefaults_ExactDeviceRequest(obj *resourcev1.ExactDeviceRequest) {
	if obj.AllocationMode == "" {
		obj.AllocationMode = resourcev1.DeviceAllocationModeExactCount
	}
	if obj.AllocationMode == resourcev1.DeviceAllocationModeExactCount && obj.Count == 0 {
		obj.Count = 1
	}
}

// SetDefaults_DeviceSubRequest: ExactCount, count 1.
func SetDefaults_DeviceSubRequest(obj *resourcev1.DeviceSubRequest) {
	if obj.AllocationMode == "" {
		obj.AllocationMode = resourcev1.DeviceAllocationModeExactCount
	}
	if obj.AllocationMode == resourcev1.DeviceAllocationModeExactCount && obj.Count == 0 {
		obj.Count = 1
	}
}

// SetDefaults_DeviceTaint: the time the taint was added.
func SetDefaults_DeviceTaint(obj *resourcev1.DeviceTaint) {
	if obj.TimeAdded == nil {
		obj.TimeAdded = &metav1.Time{Time: Now().Truncate(time.Second)}
	}
}

func setDeviceClaim(c *resourcev1.DeviceClaim) {
	for i := range c.Requests {
		r := &c.Requests[i]
		if r.Exactly != nil {
			SetDefaults_ExactDeviceRequest(r.Exactly)
			setTolerations(r.Exactly.Tolerations)
		}
		for j := range r.FirstAvailable {
			SetDefaults_DeviceSubRequest(&r.FirstAvailable[j])
			setTolerations(r.FirstAvailable[j].Tolerations)
		}
	}
}

// setTolerations: a toleration's operator defaults to Equal (+default="Equal").
func setTolerations(ts []resourcev1.DeviceToleration) {
	for i := range ts {
		if ts[i].Operator == "" {
			ts[i].Operator = resourcev1.DeviceTolerationOpEqual
		}
	}
}

// SetObjectDefaults_ResourceClaim defaults a claim's requests and the
// tolerations of its allocation's results.
func SetObjectDefaults_ResourceClaim(in *resourcev1.ResourceClaim) {
	setDeviceClaim(&in.Spec.Devices)
	if a := in.Status.Allocation; a != nil {
		for i := range a.Devices.Results {
			setTolerations(a.Devices.Results[i].Tolerations)
		}
	}
}

// SetObjectDefaults_ResourceClaimTemplate defaults the requests of the
// claim a template makes.
func SetObjectDefaults_ResourceClaimTemplate(in *resourcev1.ResourceClaimTemplate) {
	setDeviceClaim(&in.Spec.Spec.Devices)
}

// SetObjectDefaults_ResourceSlice defaults the taints of a slice's devices.
func SetObjectDefaults_ResourceSlice(in *resourcev1.ResourceSlice) {
	for i := range in.Spec.Devices {
		for j := range in.Spec.Devices[i].Taints {
			SetDefaults_DeviceTaint(&in.Spec.Devices[i].Taints[j])
		}
	}
}
