package validation

import (
	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateEndpointsName checks an endpoints name: a DNS-1123 subdomain.
var ValidateEndpointsName = apimachineryvalidation.NameIsDNSSubdomain

// ValidateEndpoints checks new endpoints: metadata and
// [ValidateEndpointsFields].
func ValidateEndpoints(ep *corev1.Endpoints) field.ErrorList {
	allErrs := ValidateObjectMeta(&ep.ObjectMeta, true, ValidateEndpointsName, metadataPath)
	return append(allErrs, ValidateEndpointsFields(ep)...)
}

// ValidateEndpointsUpdate checks an update of endpoints.
func ValidateEndpointsUpdate(ep, old *corev1.Endpoints) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&ep.ObjectMeta, &old.ObjectMeta, metadataPath)
	return append(allErrs, ValidateEndpointsFields(ep)...)
}

// ValidateEndpointsFields checks the subsets, as kube's ValidateEndpoints:
// each subset has addresses or notReadyAddresses; an address is a valid IP
// that is not unspecified, loopback or link-local, with a DNS-1123 label
// hostname and a DNS-1123 subdomain nodeName; ports are 1-65535 with a
// supported protocol, named (DNS-1123 labels) when there are several.
func ValidateEndpointsFields(ep *corev1.Endpoints) field.ErrorList {
	var allErrs field.ErrorList
	path := field.NewPath("subsets")
	for i := range ep.Subsets {
		ss := &ep.Subsets[i]
		idx := path.Index(i)
		if len(ss.Addresses) == 0 && len(ss.NotReadyAddresses) == 0 {
			allErrs = append(allErrs, field.Required(idx, "must specify `addresses` or `notReadyAddresses`"))
		}
		for j := range ss.Addresses {
			allErrs = append(allErrs, validateEndpointAddress(&ss.Addresses[j], idx.Child("addresses").Index(j))...)
		}
		for j := range ss.NotReadyAddresses {
			allErrs = append(allErrs, validateEndpointAddress(&ss.NotReadyAddresses[j], idx.Child("notReadyAddresses").Index(j))...)
		}
		for j := range ss.Ports {
			allErrs = append(allErrs, validateEndpointPort(&ss.Ports[j], len(ss.Ports) > 1, idx.Child("ports").Index(j))...)
		}
	}
	return allErrs
}

func validateEndpointAddress(a *corev1.EndpointAddress, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	ipErrs := validation.IsValidIP(fldPath.Child("ip"), a.IP)
	allErrs = append(allErrs, ipErrs...)
	if a.Hostname != "" {
		allErrs = append(allErrs, validateDNS1123Label(a.Hostname, fldPath.Child("hostname"))...)
	}
	if a.NodeName != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*a.NodeName) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("nodeName"), *a.NodeName, msg))
		}
	}
	// v1.37.2's validateEndpointAddress checks the special ranges even
	// when the IP is not valid: "bad" is reported twice, in two wordings.
	return append(allErrs, ValidateNonSpecialIP(a.IP, fldPath.Child("ip"))...)
}

func validateEndpointPort(p *corev1.EndpointPort, requireName bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if requireName && p.Name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	} else if p.Name != "" {
		allErrs = append(allErrs, validateDNS1123Label(p.Name, fldPath.Child("name"))...)
	}
	for _, msg := range validation.IsValidPortNum(int(p.Port)) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("port"), p.Port, msg))
	}
	allErrs = append(allErrs, validateProtocol(p.Protocol, fldPath.Child("protocol"))...)
	if p.AppProtocol != nil {
		allErrs = append(allErrs, validateQualifiedName(*p.AppProtocol, fldPath.Child("appProtocol"))...)
	}
	return allErrs
}
