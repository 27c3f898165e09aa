package networking

import (
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	pathvalidation "k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	kvalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation/declarative"
)

// ValidateIPAddressName is the name rule of IPAddress objects: a valid IP
// address in canonical form, with apimachinery's IsValidIP messages (as
// upstream's ValidateIPAddressName).
func ValidateIPAddressName(name string, _ bool) []string {
	var msgs []string
	for _, err := range validation.IsValidIP(&field.Path{}, name) {
		msgs = append(msgs, err.Detail)
	}
	return msgs
}

// ValidateIPAddress checks an IPAddress with its metadata.
func ValidateIPAddress(ip *networkingv1.IPAddress) field.ErrorList {
	allErrs := kvalidation.ValidateObjectMeta(&ip.ObjectMeta, false, ValidateIPAddressName, field.NewPath("metadata"))
	return append(allErrs, ValidateIPAddressFields(ip)...)
}

// ValidateIPAddressFields checks spec.parentRef: required; group a DNS
// subdomain if set (the core group is empty); resource and name required
// path segments; namespace a path segment if set.
func ValidateIPAddressFields(ip *networkingv1.IPAddress) field.ErrorList {
	fldPath := field.NewPath("spec", "parentRef")
	ref := ip.Spec.ParentRef
	// Upstream's +k8s:required (beta) on spec.parentRef and its resource
	// and name answers their absence, after the handwritten errors.
	if ref == nil {
		return field.ErrorList{declarative.Required(fldPath)}
	}
	var allErrs field.ErrorList
	if ref.Group != "" {
		for _, msg := range validation.IsDNS1123Subdomain(ref.Group) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("group"), ref.Group, msg))
		}
	}
	segment := func(name, value string, required bool) {
		if value == "" {
			if required {
				allErrs = append(allErrs, declarative.Required(fldPath.Child(name)))
			}
			return
		}
		for _, msg := range pathvalidation.IsValidPathSegmentName(value) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child(name), value, msg))
		}
	}
	segment("resource", ref.Resource, true)
	segment("name", ref.Name, true)
	segment("namespace", ref.Namespace, false)
	return allErrs
}

// ValidateIPAddressUpdate checks an update with its metadata.
func ValidateIPAddressUpdate(ip, old *networkingv1.IPAddress) field.ErrorList {
	allErrs := kvalidation.ValidateObjectMetaUpdate(&ip.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidateIPAddressUpdateFields(ip, old)...)
}

// ValidateIPAddressUpdateFields: spec.parentRef is immutable.
func ValidateIPAddressUpdateFields(ip, old *networkingv1.IPAddress) field.ErrorList {
	// Upstream's +k8s:immutable (beta) on spec.parentRef.
	if !equality.Semantic.DeepEqual(ip.Spec.ParentRef, old.Spec.ParentRef) {
		return field.ErrorList{declarative.Immutable(field.NewPath("spec", "parentRef"))}
	}
	return nil
}

// ValidateServiceCIDR checks a ServiceCIDR with its metadata.
func ValidateServiceCIDR(sc *networkingv1.ServiceCIDR) field.ErrorList {
	allErrs := kvalidation.ValidateObjectMeta(&sc.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, ValidateServiceCIDRFields(sc)...)
}

// ValidateServiceCIDRFields checks spec.cidrs: one or two valid CIDRs, at
// most one per IP family.
func ValidateServiceCIDRFields(sc *networkingv1.ServiceCIDR) field.ErrorList {
	return validateServiceCIDRSpec(&sc.Spec, field.NewPath("spec", "cidrs"))
}

func validateServiceCIDRSpec(spec *networkingv1.ServiceCIDRSpec, fldPath *field.Path) field.ErrorList {
	switch {
	case len(spec.CIDRs) == 0:
		return field.ErrorList{field.Required(fldPath, "at least one CIDR required")}
	case len(spec.CIDRs) > 2:
		return field.ErrorList{field.Invalid(fldPath, spec, "may only hold up to 2 values")}
	}
	var allErrs field.ErrorList
	for i, cidr := range spec.CIDRs {
		allErrs = append(allErrs, validation.IsValidCIDR(fldPath.Index(i), cidr)...)
	}
	// As v1.37.2's validateServiceCIDRSpec: after the CIDRs, two of one
	// known family, the value the list (kube-apiserver v1.37.2 answered
	// ["10.0.0.0/24","10.1.0.0/24"]).
	if len(spec.CIDRs) == 2 {
		f := netutils.IPFamilyOfCIDRString(spec.CIDRs[0])
		if f == netutils.IPFamilyOfCIDRString(spec.CIDRs[1]) && f != netutils.IPFamilyUnknown {
			allErrs = append(allErrs, field.Invalid(fldPath, spec.CIDRs, "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"))
		}
	}
	return allErrs
}

// ValidateServiceCIDRUpdate checks an update with its metadata.
func ValidateServiceCIDRUpdate(sc, old *networkingv1.ServiceCIDR) field.ErrorList {
	allErrs := kvalidation.ValidateObjectMetaUpdate(&sc.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidateServiceCIDRUpdateFields(sc, old)...)
}

// ValidateServiceCIDRUpdateFields: the CIDRs never change, except that a
// single-family ServiceCIDR may gain a CIDR of the other family.
func ValidateServiceCIDRUpdateFields(sc, old *networkingv1.ServiceCIDR) field.ErrorList {
	var allErrs field.ErrorList
	fldPath := field.NewPath("spec", "cidrs")
	switch {
	case len(old.Spec.CIDRs) == len(sc.Spec.CIDRs):
		for i, cidr := range old.Spec.CIDRs {
			if cidr != sc.Spec.CIDRs[i] {
				allErrs = append(allErrs, field.Invalid(fldPath.Index(i), sc.Spec.CIDRs[i], apimachineryvalidation.FieldImmutableErrorMsg))
			}
		}
	case len(old.Spec.CIDRs) == 1 && len(sc.Spec.CIDRs) == 2:
		if old.Spec.CIDRs[0] != sc.Spec.CIDRs[0] {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(0), sc.Spec.CIDRs[0], apimachineryvalidation.FieldImmutableErrorMsg))
		}
		allErrs = append(allErrs, validateServiceCIDRSpec(&sc.Spec, fldPath)...)
	default:
		allErrs = append(allErrs, field.Invalid(fldPath, sc.Spec.CIDRs, apimachineryvalidation.FieldImmutableErrorMsg))
	}
	return allErrs
}
