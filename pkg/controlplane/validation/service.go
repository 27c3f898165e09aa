package validation

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// ValidateServiceName checks a service name: a DNS-1035 label.
var ValidateServiceName = apimachineryvalidation.NameIsDNS1035Label

// kubeletPort may not be exposed by a LoadBalancer (kube's workaround for
// clouds that over-open firewalls).
const kubeletPort = 10250

// maxClientIPServiceAffinitySeconds bounds
// sessionAffinityConfig.clientIP.timeoutSeconds (one day).
const maxClientIPServiceAffinitySeconds = 86400

var (
	specPath = field.NewPath("spec")

	supportedPortProtocols = []string{string(corev1.ProtocolSCTP), string(corev1.ProtocolTCP), string(corev1.ProtocolUDP)}
	supportedServiceTypes  = []string{string(corev1.ServiceTypeClusterIP), string(corev1.ServiceTypeExternalName),
		string(corev1.ServiceTypeLoadBalancer), string(corev1.ServiceTypeNodePort)}
	supportedSessionAffinities = []string{string(corev1.ServiceAffinityClientIP), string(corev1.ServiceAffinityNone)}
	supportedIPFamilies        = []string{string(corev1.IPv4Protocol), string(corev1.IPv6Protocol)}
	supportedIPFamilyPolicies  = []string{string(corev1.IPFamilyPolicyPreferDualStack),
		string(corev1.IPFamilyPolicyRequireDualStack), string(corev1.IPFamilyPolicySingleStack)}
	supportedTrafficPolicies = []string{string(corev1.ServiceExternalTrafficPolicyCluster), string(corev1.ServiceExternalTrafficPolicyLocal)}
	supportedDistributions   = []string{corev1.ServiceTrafficDistributionPreferClose,
		corev1.ServiceTrafficDistributionPreferSameNode, corev1.ServiceTrafficDistributionPreferSameZone}
)

// IsHeadlessService reports whether svc's clusterIP is "None".
func IsHeadlessService(svc *corev1.Service) bool {
	return svc.Spec.ClusterIP == corev1.ClusterIPNone
}

// ExternallyAccessible reports whether svc is reachable from outside the
// cluster: a NodePort or LoadBalancer, or a ClusterIP with externalIPs.
func ExternallyAccessible(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer ||
		svc.Spec.Type == corev1.ServiceTypeNodePort ||
		(svc.Spec.Type == corev1.ServiceTypeClusterIP && len(svc.Spec.ExternalIPs) > 0)
}

// NeedsHealthCheck reports whether svc gets a healthCheckNodePort: a
// LoadBalancer with externalTrafficPolicy Local.
func NeedsHealthCheck(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer &&
		svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

// ValidateService checks a new service: metadata and [ValidateServiceFields].
func ValidateService(svc *corev1.Service) field.ErrorList {
	allErrs := ValidateObjectMeta(&svc.ObjectMeta, true, ValidateServiceName, metadataPath)
	return append(allErrs, ValidateServiceFields(svc)...)
}

// ValidateServiceFields checks a service but for its metadata, as kube's
// ValidateService: ports, type-dependent fields, selector, session
// affinity, cluster IPs and IP families, external IPs, traffic policies.
// Defaults (see the service registry) are expected to be applied.
func ValidateServiceFields(svc *corev1.Service) field.ErrorList {
	return validateServiceFields(svc, nil)
}

// ValidateServiceFieldsOnUpdate is [ValidateServiceFields] for an update
// of old: load balancer source ranges old had are kept even if invalid.
func ValidateServiceFieldsOnUpdate(svc, old *corev1.Service) field.ErrorList {
	return validateServiceFields(svc, old)
}

func validateServiceFields(svc, old *corev1.Service) field.ErrorList {
	var allErrs field.ErrorList
	spec := &svc.Spec
	headless := IsHeadlessService(svc)
	portsPath := specPath.Child("ports")
	if len(spec.Ports) == 0 && !headless && spec.Type != corev1.ServiceTypeExternalName {
		allErrs = append(allErrs, field.Required(portsPath, ""))
	}
	switch spec.Type {
	case corev1.ServiceTypeLoadBalancer:
		for i, p := range spec.Ports {
			if p.Port == kubeletPort {
				allErrs = append(allErrs, field.Invalid(portsPath.Index(i), p.Port,
					fmt.Sprintf("may not expose port %v externally since it is used by kubelet", kubeletPort)))
			}
		}
		if headless {
			allErrs = append(allErrs, field.Invalid(specPath.Child("clusterIP"), spec.ClusterIP, "may not be set to 'None' for LoadBalancer services"))
		}
	case corev1.ServiceTypeNodePort:
		if headless {
			allErrs = append(allErrs, field.Invalid(specPath.Child("clusterIP"), spec.ClusterIP, "may not be set to 'None' for NodePort services"))
		}
	case corev1.ServiceTypeExternalName:
		// clusterIP is synced into clusterIPs by the strategy.
		if len(spec.ClusterIPs) > 0 {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		if len(spec.IPFamilies) > 0 {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("ipFamilies"), "may not be set for ExternalName services"))
		}
		if spec.IPFamilyPolicy != nil {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("ipFamilyPolicy"), "may not be set for ExternalName services"))
		}
		// The name may end with a dot (fully qualified).
		if cname := strings.TrimSuffix(spec.ExternalName, "."); cname != "" {
			for _, msg := range validation.IsDNS1123Subdomain(cname) {
				allErrs = append(allErrs, field.Invalid(specPath.Child("externalName"), cname, msg))
			}
		} else {
			allErrs = append(allErrs, field.Required(specPath.Child("externalName"), ""))
		}
	}

	names := map[string]bool{}
	for i := range spec.Ports {
		allErrs = append(allErrs, validateServicePort(&spec.Ports[i], len(spec.Ports) > 1, names, portsPath.Index(i))...)
	}
	if spec.Selector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabels(spec.Selector, specPath.Child("selector"))...)
	}
	allErrs = append(allErrs, validateSessionAffinity(spec)...)

	if spec.Type == "" {
		allErrs = append(allErrs, field.Required(specPath.Child("type"), ""))
	} else if !slices.Contains(supportedServiceTypes, string(spec.Type)) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("type"), spec.Type, supportedServiceTypes))
	}

	for i, ip := range spec.ExternalIPs {
		idx := specPath.Child("externalIPs").Index(i)
		if errs := validation.IsValidIP(idx, ip); len(errs) > 0 {
			allErrs = append(allErrs, errs...)
		} else {
			allErrs = append(allErrs, ValidateNonSpecialIP(ip, idx)...)
		}
	}

	if spec.Type == corev1.ServiceTypeClusterIP {
		for i, p := range spec.Ports {
			if p.NodePort != 0 {
				allErrs = append(allErrs, field.Forbidden(portsPath.Index(i).Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
			}
		}
	}
	// Duplicate (protocol, nodePort) and (protocol, port) pairs.
	type key struct {
		proto corev1.Protocol
		port  int32
	}
	nodePorts, ports := map[key]bool{}, map[key]bool{}
	for i, p := range spec.Ports {
		if p.NodePort != 0 {
			k := key{p.Protocol, p.NodePort}
			if nodePorts[k] {
				allErrs = append(allErrs, field.Duplicate(portsPath.Index(i).Child("nodePort"), p.NodePort))
			}
			nodePorts[k] = true
		}
		k := key{p.Protocol, p.Port}
		if ports[k] {
			allErrs = append(allErrs, field.Duplicate(portsPath.Index(i), corev1.ServicePort{Protocol: p.Protocol, Port: p.Port}))
		}
		ports[k] = true
	}

	allErrs = append(allErrs, validateLoadBalancerSourceRanges(svc, old)...)
	allErrs = append(allErrs, validateExternalTrafficPolicy(svc)...)
	allErrs = append(allErrs, validateInternalTrafficPolicy(svc)...)
	allErrs = append(allErrs, validateLoadBalancerFields(svc)...)
	if d := spec.TrafficDistribution; d != nil && !slices.Contains(supportedDistributions, *d) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("trafficDistribution"), *d, supportedDistributions))
	}
	allErrs = append(allErrs, ValidateServiceClusterIPsRelatedFields(svc)...)
	return allErrs
}

// validateServicePort checks one port: a DNS-1123 label name, required and
// unique when there are several ports; port 1-65535; a supported protocol;
// targetPort a port number or IANA name; appProtocol a qualified name.
func validateServicePort(sp *corev1.ServicePort, requireName bool, names map[string]bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if requireName && sp.Name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	} else if sp.Name != "" {
		allErrs = append(allErrs, validateDNS1123Label(sp.Name, fldPath.Child("name"))...)
		if names[sp.Name] {
			allErrs = append(allErrs, field.Duplicate(fldPath.Child("name"), sp.Name))
		}
		names[sp.Name] = true
	}
	for _, msg := range validation.IsValidPortNum(int(sp.Port)) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("port"), sp.Port, msg))
	}
	allErrs = append(allErrs, validateProtocol(sp.Protocol, fldPath.Child("protocol"))...)
	allErrs = append(allErrs, ValidatePortNumOrName(sp.TargetPort, fldPath.Child("targetPort"))...)
	if sp.AppProtocol != nil {
		allErrs = append(allErrs, validateQualifiedName(*sp.AppProtocol, fldPath.Child("appProtocol"))...)
	}
	return allErrs
}

func validateProtocol(p corev1.Protocol, fldPath *field.Path) field.ErrorList {
	if p == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	if !slices.Contains(supportedPortProtocols, string(p)) {
		return field.ErrorList{field.NotSupported(fldPath, p, supportedPortProtocols)}
	}
	return nil
}

// ValidatePortNumOrName checks a port given as a number (1-65535) or an
// IANA service name.
func ValidatePortNumOrName(port intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch port.Type {
	case intstr.Int:
		for _, msg := range validation.IsValidPortNum(port.IntValue()) {
			allErrs = append(allErrs, field.Invalid(fldPath, port.IntValue(), msg))
		}
	case intstr.String:
		for _, msg := range validation.IsValidPortName(port.StrVal) {
			allErrs = append(allErrs, field.Invalid(fldPath, port.StrVal, msg))
		}
	default:
		allErrs = append(allErrs, field.InternalError(fldPath, fmt.Errorf("unknown type: %v", port.Type)))
	}
	return allErrs
}

func validateSessionAffinity(spec *corev1.ServiceSpec) field.ErrorList {
	var allErrs field.ErrorList
	path := specPath.Child("sessionAffinity")
	switch {
	case spec.SessionAffinity == "":
		allErrs = append(allErrs, field.Required(path, ""))
	case !slices.Contains(supportedSessionAffinities, string(spec.SessionAffinity)):
		allErrs = append(allErrs, field.NotSupported(path, spec.SessionAffinity, supportedSessionAffinities))
	}
	cfgPath := specPath.Child("sessionAffinityConfig")
	switch spec.SessionAffinity {
	case corev1.ServiceAffinityClientIP:
		why := fmt.Sprintf("when session affinity type is %s", corev1.ServiceAffinityClientIP)
		cfg := spec.SessionAffinityConfig
		switch {
		case cfg == nil:
			allErrs = append(allErrs, field.Required(cfgPath, why))
		case cfg.ClientIP == nil:
			allErrs = append(allErrs, field.Required(cfgPath.Child("clientIP"), why))
		case cfg.ClientIP.TimeoutSeconds == nil:
			allErrs = append(allErrs, field.Required(cfgPath.Child("clientIP").Child("timeoutSeconds"), why))
		case *cfg.ClientIP.TimeoutSeconds <= 0 || *cfg.ClientIP.TimeoutSeconds > maxClientIPServiceAffinitySeconds:
			allErrs = append(allErrs, field.Invalid(cfgPath.Child("clientIP").Child("timeoutSeconds"), *cfg.ClientIP.TimeoutSeconds,
				fmt.Sprintf("must be greater than 0 and less than %d", maxClientIPServiceAffinitySeconds)))
		}
	case corev1.ServiceAffinityNone:
		if spec.SessionAffinityConfig != nil {
			allErrs = append(allErrs, field.Forbidden(cfgPath, fmt.Sprintf("must not be set when session affinity is %s", corev1.ServiceAffinityNone)))
		}
	}
	return allErrs
}

// validateLoadBalancerSourceRanges: CIDRs, only for LoadBalancers (the
// field or the annotation service.beta.kubernetes.io/load-balancer-source-ranges),
// as v1.37.2's ValidateService: each range of the field is checked at its
// index (space-padding allowed, ranges the old service had kept even if
// no longer valid); the annotation's only when it is new or changed.
func validateLoadBalancerSourceRanges(svc, old *corev1.Service) field.ErrorList {
	var allErrs field.ErrorList
	if len(svc.Spec.LoadBalancerSourceRanges) > 0 {
		// kube's path is spelled with a capital L.
		fieldPath := specPath.Child("LoadBalancerSourceRanges")
		if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
			allErrs = append(allErrs, field.Forbidden(fieldPath, "may only be used when `type` is 'LoadBalancer'"))
		}
		var existing []string
		if old != nil {
			existing = make([]string, len(old.Spec.LoadBalancerSourceRanges))
			for i, r := range old.Spec.LoadBalancerSourceRanges {
				existing[i] = strings.TrimSpace(r)
			}
		}
		for i, r := range svc.Spec.LoadBalancerSourceRanges {
			allErrs = append(allErrs, validation.IsValidCIDRForLegacyField(fieldPath.Index(i), strings.TrimSpace(r), true, existing)...)
		}
		return allErrs
	}
	annotation, ok := svc.Annotations[corev1.AnnotationLoadBalancerSourceRangesKey]
	if !ok {
		return nil
	}
	fieldPath := field.NewPath("metadata", "annotations").Key(corev1.AnnotationLoadBalancerSourceRangesKey)
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		allErrs = append(allErrs, field.Forbidden(fieldPath, "may only be used when `type` is 'LoadBalancer'"))
	}
	if old == nil || old.Annotations[corev1.AnnotationLoadBalancerSourceRangesKey] != annotation {
		if v := strings.TrimSpace(annotation); v != "" {
			for _, r := range strings.Split(v, ",") {
				allErrs = append(allErrs, validation.IsValidCIDRForLegacyField(fieldPath, strings.TrimSpace(r), true, nil)...)
			}
		}
	}
	return allErrs
}

func validateExternalTrafficPolicy(svc *corev1.Service) field.ErrorList {
	var allErrs field.ErrorList
	etp := svc.Spec.ExternalTrafficPolicy
	path := specPath.Child("externalTrafficPolicy")
	if ExternallyAccessible(svc) {
		if etp == "" {
			allErrs = append(allErrs, field.Required(path, ""))
		} else if !slices.Contains(supportedTrafficPolicies, string(etp)) {
			allErrs = append(allErrs, field.NotSupported(path, etp, supportedTrafficPolicies))
		}
	} else if etp != "" {
		allErrs = append(allErrs, field.Invalid(path, etp, "may only be set for externally-accessible services"))
	}
	hcPath := specPath.Child("healthCheckNodePort")
	if NeedsHealthCheck(svc) {
		if svc.Spec.HealthCheckNodePort == 0 {
			allErrs = append(allErrs, field.Required(hcPath, ""))
		}
	} else if svc.Spec.HealthCheckNodePort != 0 {
		allErrs = append(allErrs, field.Invalid(hcPath, svc.Spec.HealthCheckNodePort,
			"may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
	}
	return allErrs
}

func validateInternalTrafficPolicy(svc *corev1.Service) field.ErrorList {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	path := specPath.Child("internalTrafficPolicy")
	itp := svc.Spec.InternalTrafficPolicy
	if itp == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	if !slices.Contains(supportedTrafficPolicies, string(*itp)) {
		return field.ErrorList{field.NotSupported(path, *itp, supportedTrafficPolicies)}
	}
	return nil
}

// validateLoadBalancerFields: allocateLoadBalancerNodePorts is required
// for, and loadBalancerClass only allowed on, LoadBalancers.
func validateLoadBalancerFields(svc *corev1.Service) field.ErrorList {
	var allErrs field.ErrorList
	lb := svc.Spec.Type == corev1.ServiceTypeLoadBalancer
	allocPath := specPath.Child("allocateLoadBalancerNodePorts")
	if lb && svc.Spec.AllocateLoadBalancerNodePorts == nil {
		allErrs = append(allErrs, field.Required(allocPath, ""))
	} else if !lb && svc.Spec.AllocateLoadBalancerNodePorts != nil {
		allErrs = append(allErrs, field.Forbidden(allocPath, "may only be used when `type` is 'LoadBalancer'"))
	}
	if c := svc.Spec.LoadBalancerClass; c != nil {
		classPath := specPath.Child("loadBalancerClass")
		if !lb {
			allErrs = append(allErrs, field.Forbidden(classPath, "may only be used when `type` is 'LoadBalancer'"))
		} else {
			allErrs = append(allErrs, validateQualifiedName(*c, classPath)...)
		}
	}
	return allErrs
}

// ValidateServiceClusterIPsRelatedFields checks clusterIP, clusterIPs,
// ipFamilies and ipFamilyPolicy, as kube: clusterIPs[0] is clusterIP,
// "None" only alone, at most one IP per family, families match the IPs.
func ValidateServiceClusterIPsRelatedFields(svc *corev1.Service) field.ErrorList {
	var allErrs field.ErrorList
	spec := &svc.Spec
	ipsPath := specPath.Child("clusterIPs")
	familiesPath := specPath.Child("ipFamilies")
	if spec.ClusterIP != "" {
		if len(spec.ClusterIPs) == 0 {
			allErrs = append(allErrs, field.Required(ipsPath, ""))
		} else if spec.ClusterIPs[0] != spec.ClusterIP {
			allErrs = append(allErrs, field.Invalid(ipsPath, spec.ClusterIPs, "first value must match `clusterIP`"))
		}
	} else if len(spec.ClusterIPs) != 0 {
		allErrs = append(allErrs, field.Invalid(ipsPath, spec.ClusterIPs, "must be empty when `clusterIP` is not specified"))
	}
	seen := map[corev1.IPFamily]bool{}
	for i, f := range spec.IPFamilies {
		if !slices.Contains(supportedIPFamilies, string(f)) {
			allErrs = append(allErrs, field.NotSupported(familiesPath.Index(i), f, supportedIPFamilies))
		}
		if seen[f] {
			allErrs = append(allErrs, field.Duplicate(familiesPath.Index(i), f))
		}
		seen[f] = true
	}
	if p := spec.IPFamilyPolicy; p != nil && !slices.Contains(supportedIPFamilyPolicies, string(*p)) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("ipFamilyPolicy"), *p, supportedIPFamilyPolicies))
	}
	invalidIPs := false
	for i, ip := range spec.ClusterIPs {
		if i == 0 && ip == corev1.ClusterIPNone {
			if len(spec.ClusterIPs) > 1 {
				invalidIPs = true
				allErrs = append(allErrs, field.Invalid(ipsPath, spec.ClusterIPs, "'None' must be the first and only value"))
			}
			continue
		}
		if errs := validation.IsValidIP(ipsPath.Index(i), ip); len(errs) > 0 {
			invalidIPs = true
			allErrs = append(allErrs, errs...)
		}
	}
	if len(spec.ClusterIPs) > 2 {
		allErrs = append(allErrs, field.Invalid(ipsPath, spec.ClusterIPs, "may only hold up to 2 values"))
	}
	if invalidIPs {
		return allErrs
	}
	if len(spec.ClusterIPs) == 2 && isIPv6(spec.ClusterIPs[0]) == isIPv6(spec.ClusterIPs[1]) {
		allErrs = append(allErrs, field.Invalid(ipsPath, spec.ClusterIPs, "may specify no more than one IP for each IP family"))
	}
	if !IsHeadlessService(svc) {
		for i, ip := range spec.ClusterIPs {
			if i >= len(spec.IPFamilies) {
				break
			}
			if spec.IPFamilies[i] == corev1.IPv4Protocol && isIPv6(ip) {
				allErrs = append(allErrs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv4 value as indicated by `ipFamilies[%v]`", i)))
			}
			if spec.IPFamilies[i] == corev1.IPv6Protocol && !isIPv6(ip) {
				allErrs = append(allErrs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv6 value as indicated by `ipFamilies[%v]`", i)))
			}
		}
	}
	return allErrs
}

func isIPv6(s string) bool {
	ip, err := netip.ParseAddr(s)
	return err == nil && ip.Is6() && !ip.Is4In6()
}

// ValidateServiceUpdate checks an update of a service: metadata update
// rules, [ValidateServiceUpdateFields] and [ValidateServiceFields].
func ValidateServiceUpdate(svc, old *corev1.Service) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&svc.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, ValidateServiceUpdateFields(svc, old)...)
	return append(allErrs, ValidateServiceFieldsOnUpdate(svc, old)...)
}

// ValidateServiceUpdateFields checks what an update may not change: the
// cluster IPs and IP families once set (a secondary may be added or
// removed), except when the service becomes or stops being ExternalName.
func ValidateServiceUpdateFields(svc, old *corev1.Service) field.ErrorList {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || old.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	var allErrs field.ErrorList
	allErrs = append(allErrs, validateKeptPrimary(old.Spec.ClusterIPs, svc.Spec.ClusterIPs, svc.Spec.ClusterIPs, specPath.Child("clusterIPs"))...)
	oldFamilies, families := familyStrings(old.Spec.IPFamilies), familyStrings(svc.Spec.IPFamilies)
	allErrs = append(allErrs, validateKeptPrimary(oldFamilies, families, svc.Spec.IPFamilies, specPath.Child("ipFamilies"))...)
	return allErrs
}

// validateKeptPrimary: with as many values as before, none may change;
// with fewer, the first must stay; with more, the old ones must stay.
func validateKeptPrimary(old, cur []string, shown any, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case len(old) == 0:
	case len(old) == len(cur):
		for i := range old {
			if old[i] != cur[i] {
				allErrs = append(allErrs, field.Invalid(fldPath.Index(i), shown, "may not change once set"))
			}
		}
	case len(old) > len(cur):
		if len(cur) == 0 || old[0] != cur[0] {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(0), shown, "may not change once set"))
		}
	default:
		for i := range old {
			if old[i] != cur[i] {
				allErrs = append(allErrs, field.Invalid(fldPath.Index(i), shown, "may not change once set"))
			}
		}
	}
	return allErrs
}

func familyStrings(fs []corev1.IPFamily) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = string(f)
	}
	return out
}

// ValidateServiceStatusUpdate checks an update of a service's status:
// metadata update rules and the load balancer status.
func ValidateServiceStatusUpdate(svc, old *corev1.Service) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&svc.ObjectMeta, &old.ObjectMeta, metadataPath)
	return append(allErrs, ValidateServiceStatusFields(svc, old)...)
}

// ValidateServiceStatusFields checks status.loadBalancer as upstream's
// ValidateLoadBalancerStatus (pkg/apis/core/validation, v1.37.2): ingress
// only on a LoadBalancer service (nothing else is checked then); IPs
// valid (an old invalid one kept is allowed); ipMode with an IP only, and
// VIP or Proxy; hostnames DNS names, not IPs. Ports are not checked.
func ValidateServiceStatusFields(svc, old *corev1.Service) field.ErrorList {
	var allErrs field.ErrorList
	path := field.NewPath("status", "loadBalancer", "ingress")
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer && len(svc.Status.LoadBalancer.Ingress) != 0 {
		return append(allErrs, field.Forbidden(path, "may only be used when `spec.type` is 'LoadBalancer'"))
	}
	var existingIPs []string
	if old != nil {
		for _, ing := range old.Status.LoadBalancer.Ingress {
			if ing.IP != "" {
				existingIPs = append(existingIPs, ing.IP)
			}
		}
	}
	for i, ing := range svc.Status.LoadBalancer.Ingress {
		idx := path.Index(i)
		if ing.IP != "" {
			allErrs = append(allErrs, validation.IsValidIPForLegacyField(idx.Child("ip"), ing.IP, true, existingIPs)...)
		}
		switch {
		case ing.IPMode == nil:
			if ing.IP != "" {
				allErrs = append(allErrs, field.Required(idx.Child("ipMode"), "must be specified when `ip` is set"))
			}
		case ing.IP == "":
			allErrs = append(allErrs, field.Forbidden(idx.Child("ipMode"), "may not be specified when `ip` is not set"))
		case *ing.IPMode != corev1.LoadBalancerIPModeVIP && *ing.IPMode != corev1.LoadBalancerIPModeProxy:
			allErrs = append(allErrs, field.NotSupported(idx.Child("ipMode"), *ing.IPMode,
				[]string{string(corev1.LoadBalancerIPModeProxy), string(corev1.LoadBalancerIPModeVIP)}))
		}
		if ing.Hostname != "" {
			for _, msg := range validation.IsDNS1123Subdomain(ing.Hostname) {
				allErrs = append(allErrs, field.Invalid(idx.Child("hostname"), ing.Hostname, msg))
			}
			if _, err := netip.ParseAddr(ing.Hostname); err == nil {
				allErrs = append(allErrs, field.Invalid(idx.Child("hostname"), ing.Hostname, "must be a DNS name, not an IP address"))
			}
		}
	}
	return allErrs
}

func validateDNS1123Label(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

func validateQualifiedName(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsQualifiedName(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

// ValidateNonSpecialIP rejects an IP (already known to be valid) that is
// unspecified, loopback, link-local or link-local multicast: what kube
// forbids for endpoint addresses and external IPs.
//
// As upstream's ValidateEndpointIP, the IP is parsed sloppily (leading
// zeros allowed).
func ValidateNonSpecialIP(ipAddress string, fldPath *field.Path) field.ErrorList {
	sloppy := netutils.ParseIPSloppy(ipAddress)
	if sloppy == nil {
		return field.ErrorList{field.Invalid(fldPath, ipAddress, "must be a valid IP address")}
	}
	ip, _ := netip.AddrFromSlice(sloppy)
	ip = ip.Unmap()
	var allErrs field.ErrorList
	if ip.IsUnspecified() {
		allErrs = append(allErrs, field.Invalid(fldPath, ipAddress, fmt.Sprintf("may not be unspecified (%v)", ipAddress)))
	}
	if ip.IsLoopback() {
		allErrs = append(allErrs, field.Invalid(fldPath, ipAddress, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if ip.IsLinkLocalUnicast() {
		allErrs = append(allErrs, field.Invalid(fldPath, ipAddress, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if ip.IsLinkLocalMulticast() {
		allErrs = append(allErrs, field.Invalid(fldPath, ipAddress, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return allErrs
}
