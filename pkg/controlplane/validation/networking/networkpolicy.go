package networking

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	kvalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation/declarative"
)

// NetworkPolicyOptions relax checks for objects stored before a rule
// tightened (upstream's NetworkPolicyValidationOptions).
type NetworkPolicyOptions struct {
	AllowInvalidLabelValueInSelector bool
	// AllowCIDRsEvenIfInvalid lists CIDRs the stored policy already had:
	// they are accepted in the legacy, non-canonical forms.
	AllowCIDRsEvenIfInvalid []string
}

// NetworkPolicyOptionsForUpdate is what an update tolerates of old.
func NetworkPolicyOptionsForUpdate(old *networkingv1.NetworkPolicy) NetworkPolicyOptions {
	opts := NetworkPolicyOptions{}
	if old == nil {
		return opts
	}
	hasInvalid := func(sel *metav1.LabelSelector) bool {
		return sel != nil && metav1validation.LabelSelectorHasInvalidLabelValue(sel)
	}
	if hasInvalid(&old.Spec.PodSelector) {
		opts.AllowInvalidLabelValueInSelector = true
	}
	peers := func(ps []networkingv1.NetworkPolicyPeer) {
		for _, p := range ps {
			if hasInvalid(p.PodSelector) || hasInvalid(p.NamespaceSelector) {
				opts.AllowInvalidLabelValueInSelector = true
			}
			if p.IPBlock != nil {
				opts.AllowCIDRsEvenIfInvalid = append(opts.AllowCIDRsEvenIfInvalid, p.IPBlock.CIDR)
				opts.AllowCIDRsEvenIfInvalid = append(opts.AllowCIDRsEvenIfInvalid, p.IPBlock.Except...)
			}
		}
	}
	for _, r := range old.Spec.Ingress {
		peers(r.From)
	}
	for _, r := range old.Spec.Egress {
		peers(r.To)
	}
	return opts
}

// ValidateNetworkPolicy checks a policy with its metadata (namespaced, a
// DNS subdomain name).
func ValidateNetworkPolicy(np *networkingv1.NetworkPolicy, opts NetworkPolicyOptions) field.ErrorList {
	allErrs := kvalidation.ValidateObjectMeta(&np.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, ValidateNetworkPolicyFields(np, opts)...)
}

// ValidateNetworkPolicyFields checks a policy's spec.
func ValidateNetworkPolicyFields(np *networkingv1.NetworkPolicy, opts NetworkPolicyOptions) field.ErrorList {
	return validateNetworkPolicySpec(&np.Spec, opts, field.NewPath("spec"))
}

// ValidateNetworkPolicyUpdate checks an update with its metadata.
func ValidateNetworkPolicyUpdate(np, old *networkingv1.NetworkPolicy) field.ErrorList {
	allErrs := kvalidation.ValidateObjectMetaUpdate(&np.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidateNetworkPolicyFields(np, NetworkPolicyOptionsForUpdate(old))...)
}

func validateNetworkPolicySpec(spec *networkingv1.NetworkPolicySpec, opts NetworkPolicyOptions, fldPath *field.Path) field.ErrorList {
	selOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.AllowInvalidLabelValueInSelector}
	allErrs := metav1validation.ValidateLabelSelector(&spec.PodSelector, selOpts, fldPath.Child("podSelector"))
	for i, rule := range spec.Ingress {
		rulePath := fldPath.Child("ingress").Index(i)
		for j := range rule.Ports {
			allErrs = append(allErrs, validateNetworkPolicyPort(&rule.Ports[j], rulePath.Child("ports").Index(j))...)
		}
		for j := range rule.From {
			allErrs = append(allErrs, validateNetworkPolicyPeer(&rule.From[j], opts, rulePath.Child("from").Index(j))...)
		}
	}
	for i, rule := range spec.Egress {
		rulePath := fldPath.Child("egress").Index(i)
		for j := range rule.Ports {
			allErrs = append(allErrs, validateNetworkPolicyPort(&rule.Ports[j], rulePath.Child("ports").Index(j))...)
		}
		for j := range rule.To {
			allErrs = append(allErrs, validateNetworkPolicyPeer(&rule.To[j], opts, rulePath.Child("to").Index(j))...)
		}
	}
	if len(spec.PolicyTypes) > 2 {
		return append(allErrs, field.Invalid(fldPath.Child("policyTypes"), &spec.PolicyTypes, "may not specify more than two policyTypes"))
	}
	for i, t := range spec.PolicyTypes {
		if t != networkingv1.PolicyTypeIngress && t != networkingv1.PolicyTypeEgress {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("policyTypes").Index(i), t, []string{string(networkingv1.PolicyTypeIngress), string(networkingv1.PolicyTypeEgress)}))
		}
	}
	return allErrs
}

var networkPolicyProtocols = []string{string(corev1.ProtocolTCP), string(corev1.ProtocolUDP), string(corev1.ProtocolSCTP)}

func validateNetworkPolicyPort(port *networkingv1.NetworkPolicyPort, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if p := port.Protocol; p != nil && *p != corev1.ProtocolTCP && *p != corev1.ProtocolUDP && *p != corev1.ProtocolSCTP {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("protocol"), *p, networkPolicyProtocols))
	}
	switch {
	case port.Port == nil:
		if port.EndPort != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("endPort"), *port.EndPort, "may not be specified when `port` is not specified"))
		}
	case port.Port.Type == intstr.Int:
		for _, msg := range validation.IsValidPortNum(int(port.Port.IntVal)) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("port"), port.Port.IntVal, msg))
		}
		if port.EndPort != nil {
			if *port.EndPort < port.Port.IntVal {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("endPort"), port.Port.IntVal, "must be greater than or equal to `port`"))
			}
			for _, msg := range validation.IsValidPortNum(int(*port.EndPort)) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("endPort"), *port.EndPort, msg))
			}
		}
	default:
		if port.EndPort != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("endPort"), *port.EndPort, "may not be specified when `port` is non-numeric"))
		}
		for _, msg := range validation.IsValidPortName(port.Port.StrVal) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("port"), port.Port.StrVal, msg))
		}
	}
	return allErrs
}

func validateNetworkPolicyPeer(peer *networkingv1.NetworkPolicyPeer, opts NetworkPolicyOptions, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	selOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.AllowInvalidLabelValueInSelector}
	peers := 0
	if peer.PodSelector != nil {
		peers++
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(peer.PodSelector, selOpts, fldPath.Child("podSelector"))...)
	}
	if peer.NamespaceSelector != nil {
		peers++
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(peer.NamespaceSelector, selOpts, fldPath.Child("namespaceSelector"))...)
	}
	if peer.IPBlock != nil {
		peers++
		allErrs = append(allErrs, validateIPBlock(peer.IPBlock, opts, fldPath.Child("ipBlock"))...)
	}
	switch {
	case peers == 0:
		allErrs = append(allErrs, field.Required(fldPath, "must specify a peer"))
	case peers > 1 && peer.IPBlock != nil:
		allErrs = append(allErrs, field.Forbidden(fldPath, "may not specify both ipBlock and another peer"))
	}
	return allErrs
}

// validateIPBlock: cidr required and valid; each except entry valid and a
// strict subset of cidr.
func validateIPBlock(ipb *networkingv1.IPBlock, opts NetworkPolicyOptions, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if ipb.CIDR == "" {
		// Upstream's +k8s:required (beta) on IPBlock.cidr.
		return field.ErrorList{declarative.Required(fldPath.Child("cidr"))}
	}
	allErrs = append(allErrs, validation.IsValidCIDRForLegacyField(fldPath.Child("cidr"), ipb.CIDR, true, opts.AllowCIDRsEvenIfInvalid)...)
	_, cidr, err := netutils.ParseCIDRSloppy(ipb.CIDR)
	if err != nil {
		return allErrs
	}
	for i, ex := range ipb.Except {
		exPath := fldPath.Child("except").Index(i)
		allErrs = append(allErrs, validation.IsValidCIDRForLegacyField(exPath, ex, true, opts.AllowCIDRsEvenIfInvalid)...)
		_, exCIDR, err := netutils.ParseCIDRSloppy(ex)
		if err != nil {
			continue
		}
		cidrLen, _ := cidr.Mask.Size()
		exLen, _ := exCIDR.Mask.Size()
		if !cidr.Contains(exCIDR.IP) || cidrLen >= exLen {
			allErrs = append(allErrs, field.Invalid(exPath, ex, "must be a strict subset of `cidr`"))
		}
	}
	return allErrs
}
