package resourceslice

import (
	resourcev1 "k8s.io/api/resource/v1"
)

// dropDisabledFields drops the fields of the DRA features whose gates are
// off by default in kube-apiserver v1.37.2 (all alpha), from a new slice
// and from an update unless the stored slice (old, nil on create) already
// uses the feature, as upstream's resourceslice dropDisabledFields:
// spec.partitionTypeAttribute (DRAPartitionableDevicesType),
// spec.skipNodeOperations (DRAOptionalNodeOperations), devices'
// consumesCounters[].compatibilityGroups (DRADeviceCompatibilityGroups),
// devices' nodeAllocatableResources (DRANodeAllocatableResources) and the
// list values of device attributes (DRAListTypeAttributes).
func dropDisabledFields(s, old *resourcev1.ResourceSlice) {
	if old == nil || old.Spec.PartitionTypeAttribute == nil {
		s.Spec.PartitionTypeAttribute = nil
	}
	if old == nil || len(old.Spec.SkipNodeOperations) == 0 {
		s.Spec.SkipNodeOperations = nil
	}
	if !anyDevice(old, func(d *resourcev1.Device) bool {
		for _, c := range d.ConsumesCounters {
			if len(c.CompatibilityGroups) > 0 {
				return true
			}
		}
		return false
	}) {
		for i := range s.Spec.Devices {
			for j := range s.Spec.Devices[i].ConsumesCounters {
				s.Spec.Devices[i].ConsumesCounters[j].CompatibilityGroups = nil
			}
		}
	}
	if !anyDevice(old, func(d *resourcev1.Device) bool { return len(d.NodeAllocatableResources) > 0 }) {
		for i := range s.Spec.Devices {
			s.Spec.Devices[i].NodeAllocatableResources = nil
		}
	}
	if !anyDevice(old, func(d *resourcev1.Device) bool {
		for _, a := range d.Attributes {
			if hasListValues(a) {
				return true
			}
		}
		return false
	}) {
		for i := range s.Spec.Devices {
			attrs := s.Spec.Devices[i].Attributes
			for k, a := range attrs {
				if hasListValues(a) {
					a.BoolValues, a.IntValues, a.StringValues, a.VersionValues = nil, nil, nil, nil
					attrs[k] = a
				}
			}
		}
	}
}

func hasListValues(a resourcev1.DeviceAttribute) bool {
	return a.BoolValues != nil || a.IntValues != nil || a.StringValues != nil || a.VersionValues != nil
}

// anyDevice reports whether pred holds for a device of s (false for nil).
func anyDevice(s *resourcev1.ResourceSlice, pred func(*resourcev1.Device) bool) bool {
	if s == nil {
		return false
	}
	for i := range s.Spec.Devices {
		if pred(&s.Spec.Devices[i]) {
			return true
		}
	}
	return false
}
