package resourceclaim

import (
	resourcev1 "k8s.io/api/resource/v1"
)

// DropDisabledSpecFields drops from a claim spec (of a claim or a claim
// template) the device requests' derivedAttributes (DRADerivedAttributes,
// alpha, off by default in kube-apiserver v1.37.2) unless old (the stored
// spec, nil on create) uses them, as upstream's
// resourceclaimspec.DropDisabledFields with the default gates.
func DropDisabledSpecFields(spec, old *resourcev1.ResourceClaimSpec) {
	if derivedAttributesInUse(old) {
		return
	}
	for i := range spec.Devices.Requests {
		r := &spec.Devices.Requests[i]
		if r.Exactly != nil {
			r.Exactly.DerivedAttributes = nil
		}
		for j := range r.FirstAvailable {
			r.FirstAvailable[j].DerivedAttributes = nil
		}
	}
}

func derivedAttributesInUse(spec *resourcev1.ResourceClaimSpec) bool {
	if spec == nil {
		return false
	}
	for _, r := range spec.Devices.Requests {
		if r.Exactly != nil && len(r.Exactly.DerivedAttributes) > 0 {
			return true
		}
		for _, s := range r.FirstAvailable {
			if len(s.DerivedAttributes) > 0 {
				return true
			}
		}
	}
	return false
}
