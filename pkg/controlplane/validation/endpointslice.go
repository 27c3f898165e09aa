package validation

import (
	"slices"

	discoveryv1 "k8s.io/api/discovery/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/declarative"
)

// Limits of an EndpointSlice, as kube's.
const (
	MaxEndpointSliceEndpoints = 1000
	MaxEndpointSlicePorts     = 20000
	maxEndpointAddresses      = 100
	maxTopologyLabels         = 16
	maxZoneHints              = 8
	maxNodeHints              = 8
)

var supportedAddressTypes = []string{string(discoveryv1.AddressTypeFQDN),
	string(discoveryv1.AddressTypeIPv4), string(discoveryv1.AddressTypeIPv6)}

// ValidateEndpointSliceName checks an endpoint slice name: a DNS-1123
// subdomain.
var ValidateEndpointSliceName = apimachineryvalidation.NameIsDNSSubdomain

// ValidateEndpointSlice checks a new endpoint slice: metadata (generic
// rules, as kube's discovery validation) and [ValidateEndpointSliceFields].
func ValidateEndpointSlice(s *discoveryv1.EndpointSlice) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&s.ObjectMeta, true, ValidateEndpointSliceName, metadataPath)
	return append(allErrs, ValidateEndpointSliceFields(s)...)
}

// ValidateEndpointSliceUpdate checks an update: metadata update rules, the
// fields, and addressType, which is immutable.
func ValidateEndpointSliceUpdate(s, old *discoveryv1.EndpointSlice) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, ValidateEndpointSliceUpdateFields(s, old)...)
	return append(allErrs, ValidateEndpointSliceFields(s)...)
}

// ValidateEndpointSliceUpdateFields: addressType may not change.
func ValidateEndpointSliceUpdateFields(s, old *discoveryv1.EndpointSlice) field.ErrorList {
	// Upstream's +k8s:immutable (beta) on addressType.
	if s.AddressType != old.AddressType {
		return field.ErrorList{declarative.Immutable(field.NewPath("addressType"))}
	}
	return nil
}

// ValidateEndpointSliceFields checks a slice but for its metadata, as
// kube: a supported addressType; at most 1000 endpoints, each with 1-100
// addresses of the slice's type (IPs neither unspecified, loopback nor
// link-local), a valid nodeName, hostname and hints; at most 20000 ports,
// names unique DNS-1123 labels, protocol TCP, UDP or SCTP (port numbers
// are not checked, as kube).
func ValidateEndpointSliceFields(s *discoveryv1.EndpointSlice) field.ErrorList {
	var allErrs field.ErrorList
	atPath := field.NewPath("addressType")
	if s.AddressType == "" {
		// Upstream's +k8s:required and +k8s:enum (beta) on addressType.
		allErrs = append(allErrs, declarative.Required(atPath))
	} else if !slices.Contains(supportedAddressTypes, string(s.AddressType)) {
		allErrs = append(allErrs, field.NotSupported(atPath, s.AddressType, supportedAddressTypes).MarkCoveredByDeclarative().MarkBeta())
	}
	// Ports before endpoints, as upstream's ValidateEndpointSlice.
	allErrs = append(allErrs, validateSlicePorts(s.Ports, field.NewPath("ports"))...)
	allErrs = append(allErrs, validateSliceEndpoints(s.Endpoints, s.AddressType, field.NewPath("endpoints"))...)
	return allErrs
}

func validateSliceEndpoints(endpoints []discoveryv1.Endpoint, addrType discoveryv1.AddressType, fldPath *field.Path) field.ErrorList {
	if len(endpoints) > MaxEndpointSliceEndpoints {
		return field.ErrorList{field.TooMany(fldPath, len(endpoints), MaxEndpointSliceEndpoints)}
	}
	var allErrs field.ErrorList
	for i := range endpoints {
		ep := &endpoints[i]
		idx := fldPath.Index(i)
		addrPath := idx.Child("addresses")
		if len(ep.Addresses) == 0 {
			// Upstream's +k8s:required and +k8s:maxItems=100 (beta).
			allErrs = append(allErrs, declarative.Required(addrPath))
		} else if len(ep.Addresses) > maxEndpointAddresses {
			allErrs = append(allErrs, field.TooMany(addrPath, len(ep.Addresses), maxEndpointAddresses).WithOrigin("maxItems").MarkCoveredByDeclarative().MarkBeta())
		}
		for j, a := range ep.Addresses {
			allErrs = append(allErrs, validateSliceAddress(a, addrType, addrPath, j)...)
		}
		if ep.NodeName != nil {
			for _, msg := range validation.IsDNS1123Subdomain(*ep.NodeName) {
				allErrs = append(allErrs, field.Invalid(idx.Child("nodeName"), *ep.NodeName, msg))
			}
		}
		topoPath := idx.Child("deprecatedTopology")
		if len(ep.DeprecatedTopology) > maxTopologyLabels {
			allErrs = append(allErrs, field.TooMany(topoPath, len(ep.DeprecatedTopology), maxTopologyLabels))
		}
		allErrs = append(allErrs, metav1validation.ValidateLabels(ep.DeprecatedTopology, topoPath)...)
		if ep.Hostname != nil {
			allErrs = append(allErrs, validateDNS1123Label(*ep.Hostname, idx.Child("hostname"))...)
		}
		if ep.Zone != nil {
			for _, msg := range validation.IsValidLabelValue(*ep.Zone) {
				allErrs = append(allErrs, field.Invalid(idx.Child("zone"), *ep.Zone, msg))
			}
		}
		if ep.Hints != nil {
			allErrs = append(allErrs, validateSliceHints(ep.Hints, idx.Child("hints"))...)
		}
	}
	return allErrs
}

// validateSliceAddress checks address j of a known type at addrPath
// (others are not checked), as v1.37.2's validateEndpoints: an IPv4 one
// with the legacy-field rules, an IPv6 one strictly, then the family
// (reported at the list, sic) and ValidateEndpointIP's special ranges.
func validateSliceAddress(a string, addrType discoveryv1.AddressType, addrPath *field.Path, j int) field.ErrorList {
	fldPath := addrPath.Index(j)
	var ipErrs field.ErrorList
	switch addrType {
	case discoveryv1.AddressTypeIPv4:
		ipErrs = validation.IsValidIPForLegacyField(fldPath, a, true, nil)
	case discoveryv1.AddressTypeIPv6:
		ipErrs = validation.IsValidIP(fldPath, a)
	case discoveryv1.AddressTypeFQDN:
		return validation.IsFullyQualifiedDomainName(fldPath, a)
	default:
		return nil
	}
	if len(ipErrs) > 0 {
		return ipErrs
	}
	var allErrs field.ErrorList
	if addrType == discoveryv1.AddressTypeIPv4 && !netutils.IsIPv4String(a) {
		allErrs = append(allErrs, field.Invalid(addrPath, a, "must be an IPv4 address"))
	}
	if addrType == discoveryv1.AddressTypeIPv6 && !netutils.IsIPv6String(a) {
		allErrs = append(allErrs, field.Invalid(addrPath, a, "must be an IPv6 address"))
	}
	return append(allErrs, ValidateNonSpecialIP(a, fldPath)...)
}

func validateSliceHints(h *discoveryv1.EndpointHints, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	zonesPath := fldPath.Child("forZones")
	if len(h.ForZones) > maxZoneHints {
		allErrs = append(allErrs, field.TooMany(zonesPath, len(h.ForZones), maxZoneHints))
	} else {
		seen := map[string]bool{}
		for i, z := range h.ForZones {
			p := zonesPath.Index(i).Child("name")
			if seen[z.Name] {
				allErrs = append(allErrs, field.Duplicate(p, z.Name))
			}
			seen[z.Name] = true
			for _, msg := range validation.IsValidLabelValue(z.Name) {
				allErrs = append(allErrs, field.Invalid(p, z.Name, msg))
			}
		}
	}
	nodesPath := fldPath.Child("forNodes")
	if len(h.ForNodes) > maxNodeHints {
		allErrs = append(allErrs, field.TooMany(nodesPath, len(h.ForNodes), maxNodeHints))
	} else {
		seen := map[string]bool{}
		for i, n := range h.ForNodes {
			p := nodesPath.Index(i).Child("name")
			if seen[n.Name] {
				allErrs = append(allErrs, field.Duplicate(p, n.Name))
			}
			seen[n.Name] = true
			for _, msg := range validation.IsDNS1123Subdomain(n.Name) {
				allErrs = append(allErrs, field.Invalid(p, n.Name, msg))
			}
		}
	}
	return allErrs
}

func validateSlicePorts(ports []discoveryv1.EndpointPort, fldPath *field.Path) field.ErrorList {
	if len(ports) > MaxEndpointSlicePorts {
		return field.ErrorList{field.TooMany(fldPath, len(ports), MaxEndpointSlicePorts)}
	}
	var allErrs field.ErrorList
	names := map[string]bool{}
	for i, p := range ports {
		idx := fldPath.Index(i)
		name := ""
		if p.Name != nil {
			name = *p.Name
		}
		if name != "" {
			allErrs = append(allErrs, validateDNS1123Label(name, idx.Child("name"))...)
		}
		if names[name] {
			allErrs = append(allErrs, field.Duplicate(idx.Child("name"), name))
		}
		names[name] = true
		if p.Protocol == nil {
			allErrs = append(allErrs, field.Required(idx.Child("protocol"), ""))
		} else {
			allErrs = append(allErrs, validateProtocol(*p.Protocol, idx.Child("protocol"))...)
		}
		if p.AppProtocol != nil {
			allErrs = append(allErrs, validateQualifiedName(*p.AppProtocol, idx.Child("appProtocol"))...)
		}
	}
	return allErrs
}

// EndpointSliceServiceNameLabel is the label naming an EndpointSlice's
// Service ("kubernetes.io/service-name").
const EndpointSliceServiceNameLabel = discoveryv1.LabelServiceName
