package networking

import (
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	pathvalidation "k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	kvalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation"
)

// AnnotationIngressClass is the deprecated annotation naming an Ingress's
// class.
const AnnotationIngressClass = "kubernetes.io/ingress.class"

// IngressOptions relax checks for objects stored before a rule tightened
// (upstream's IngressValidationOptions).
type IngressOptions struct {
	// AllowInvalidSecretName: an update keeps a TLS secretName that is not
	// a valid Secret name when the stored Ingress had one.
	AllowInvalidSecretName bool
	// AllowInvalidWildcardHostRule: an update keeps a wildcard host rule
	// the stored Ingress had.
	AllowInvalidWildcardHostRule bool
}

// IngressOptionsForUpdate is what an update tolerates of old.
func IngressOptionsForUpdate(old *networkingv1.Ingress) IngressOptions {
	var opts IngressOptions
	for _, t := range old.Spec.TLS {
		if t.SecretName != "" && len(apimachineryvalidation.NameIsDNSSubdomain(t.SecretName, false)) > 0 {
			opts.AllowInvalidSecretName = true
		}
	}
	for _, r := range old.Spec.Rules {
		if strings.Contains(r.Host, "*") && len(validation.IsWildcardDNS1123Subdomain(r.Host)) > 0 {
			opts.AllowInvalidWildcardHostRule = true
		}
	}
	return opts
}

// ValidateIngressCreate checks a new Ingress with its metadata.
func ValidateIngressCreate(ing *networkingv1.Ingress) field.ErrorList {
	allErrs := kvalidation.ValidateObjectMeta(&ing.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, ValidateIngressCreateFields(ing)...)
}

// ValidateIngressCreateFields checks a new Ingress's spec, and that the
// deprecated class annotation agrees with spec.ingressClassName.
func ValidateIngressCreateFields(ing *networkingv1.Ingress) field.ErrorList {
	allErrs := validateIngressSpec(&ing.Spec, field.NewPath("spec"), IngressOptions{})
	if class, ok := ing.Annotations[AnnotationIngressClass]; ok && ing.Spec.IngressClassName != nil && class != *ing.Spec.IngressClassName {
		allErrs = append(allErrs, field.Invalid(field.NewPath("annotations").Child(AnnotationIngressClass), class, "must match `ingressClassName` when both are specified"))
	}
	return allErrs
}

// ValidateIngressUpdate checks an update with its metadata.
func ValidateIngressUpdate(ing, old *networkingv1.Ingress) field.ErrorList {
	allErrs := kvalidation.ValidateObjectMetaUpdate(&ing.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidateIngressUpdateFields(ing, old)...)
}

// ValidateIngressUpdateFields checks an update's spec.
func ValidateIngressUpdateFields(ing, old *networkingv1.Ingress) field.ErrorList {
	return validateIngressSpec(&ing.Spec, field.NewPath("spec"), IngressOptionsForUpdate(old))
}

// ValidateIngressStatusUpdateFields checks an ingresses/status update.
func ValidateIngressStatusUpdateFields(ing, _ *networkingv1.Ingress) field.ErrorList {
	return validateIngressLoadBalancerStatus(&ing.Status.LoadBalancer, field.NewPath("status", "loadBalancer"))
}

func validateIngressSpec(spec *networkingv1.IngressSpec, fldPath *field.Path, opts IngressOptions) field.ErrorList {
	var allErrs field.ErrorList
	if len(spec.Rules) == 0 && spec.DefaultBackend == nil {
		allErrs = append(allErrs, field.Invalid(fldPath, spec.Rules, "either `defaultBackend` or `rules` must be specified"))
	}
	if spec.DefaultBackend != nil {
		allErrs = append(allErrs, validateIngressBackend(spec.DefaultBackend, fldPath.Child("defaultBackend"))...)
	}
	if len(spec.Rules) > 0 {
		allErrs = append(allErrs, validateIngressRules(spec.Rules, fldPath.Child("rules"), opts)...)
	}
	if len(spec.TLS) > 0 {
		allErrs = append(allErrs, validateIngressTLS(spec.TLS, fldPath.Child("tls"), opts)...)
	}
	if spec.IngressClassName != nil {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(*spec.IngressClassName, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("ingressClassName"), *spec.IngressClassName, msg))
		}
	}
	return allErrs
}

func validateIngressTLS(tls []networkingv1.IngressTLS, fldPath *field.Path, opts IngressOptions) field.ErrorList {
	var allErrs field.ErrorList
	for i, t := range tls {
		for j, host := range t.Hosts {
			hostPath := fldPath.Index(i).Child("hosts").Index(j)
			if strings.Contains(host, "*") {
				for _, msg := range validation.IsWildcardDNS1123Subdomain(host) {
					allErrs = append(allErrs, field.Invalid(hostPath, host, msg))
				}
				continue
			}
			for _, msg := range validation.IsDNS1123Subdomain(host) {
				allErrs = append(allErrs, field.Invalid(hostPath, host, msg))
			}
		}
		if !opts.AllowInvalidSecretName && t.SecretName != "" {
			for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(t.SecretName, false) {
				allErrs = append(allErrs, field.Invalid(fldPath.Index(i).Child("secretName"), t.SecretName, msg))
			}
		}
	}
	return allErrs
}

func validateIngressRules(rules []networkingv1.IngressRule, fldPath *field.Path, opts IngressOptions) field.ErrorList {
	var allErrs field.ErrorList
	for i, r := range rules {
		wildcardHost := false
		if r.Host != "" {
			hostPath := fldPath.Index(i).Child("host")
			if netutils.ParseIPSloppy(r.Host) != nil {
				allErrs = append(allErrs, field.Invalid(hostPath, r.Host, "must be a DNS name, not an IP address"))
			}
			if strings.Contains(r.Host, "*") {
				wildcardHost = true
				for _, msg := range validation.IsWildcardDNS1123Subdomain(r.Host) {
					allErrs = append(allErrs, field.Invalid(hostPath, r.Host, msg))
				}
			} else {
				for _, msg := range validation.IsDNS1123Subdomain(r.Host) {
					allErrs = append(allErrs, field.Invalid(hostPath, r.Host, msg))
				}
			}
		}
		if !wildcardHost || !opts.AllowInvalidWildcardHostRule {
			allErrs = append(allErrs, validateIngressRuleValue(&r.IngressRuleValue, fldPath.Index(i))...)
		}
	}
	return allErrs
}

func validateIngressRuleValue(v *networkingv1.IngressRuleValue, fldPath *field.Path) field.ErrorList {
	if v.HTTP == nil {
		return nil
	}
	return validateHTTPIngressRuleValue(v.HTTP, fldPath.Child("http"))
}

func validateHTTPIngressRuleValue(v *networkingv1.HTTPIngressRuleValue, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(v.Paths) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("paths"), ""))
	}
	for i := range v.Paths {
		allErrs = append(allErrs, validateHTTPIngressPath(&v.Paths[i], fldPath.Child("paths").Index(i))...)
	}
	return allErrs
}

var (
	invalidPathSequences = []string{"//", "/./", "/../", "%2f", "%2F"}
	invalidPathSuffixes  = []string{"/..", "/."}
	// supportedPathTypes, sorted as upstream lists them.
	supportedPathTypes = []string{string(networkingv1.PathTypeExact), string(networkingv1.PathTypeImplementationSpecific), string(networkingv1.PathTypePrefix)}
)

func validateHTTPIngressPath(p *networkingv1.HTTPIngressPath, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if p.PathType == nil {
		return append(allErrs, field.Required(fldPath.Child("pathType"), "pathType must be specified"))
	}
	switch *p.PathType {
	case networkingv1.PathTypeExact, networkingv1.PathTypePrefix:
		if !strings.HasPrefix(p.Path, "/") {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("path"), p.Path, "must be an absolute path"))
		}
		if p.Path != "" {
			for _, seq := range invalidPathSequences {
				if strings.Contains(p.Path, seq) {
					allErrs = append(allErrs, field.Invalid(fldPath.Child("path"), p.Path, "must not contain '"+seq+"'"))
				}
			}
			for _, suffix := range invalidPathSuffixes {
				if strings.HasSuffix(p.Path, suffix) {
					allErrs = append(allErrs, field.Invalid(fldPath.Child("path"), p.Path, "cannot end with '"+suffix+"'"))
				}
			}
		}
	case networkingv1.PathTypeImplementationSpecific:
		if p.Path != "" && !strings.HasPrefix(p.Path, "/") {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("path"), p.Path, "must be an absolute path"))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("pathType"), *p.PathType, supportedPathTypes))
	}
	return append(allErrs, validateIngressBackend(&p.Backend, fldPath.Child("backend"))...)
}

func validateIngressBackend(b *networkingv1.IngressBackend, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case b.Resource != nil && b.Service != nil:
		allErrs = append(allErrs, field.Invalid(fldPath, "", "cannot set both resource and service backends"))
	case b.Resource != nil:
		allErrs = append(allErrs, validateTypedLocalObjectReference(b.Resource.APIGroup, b.Resource.Kind, b.Resource.Name, fldPath.Child("resource"))...)
	case b.Service != nil:
		namePath := fldPath.Child("service", "name")
		if b.Service.Name == "" {
			allErrs = append(allErrs, field.Required(namePath, ""))
		} else {
			for _, msg := range apimachineryvalidation.NameIsDNS1035Label(b.Service.Name, false) {
				allErrs = append(allErrs, field.Invalid(namePath, b.Service.Name, msg))
			}
		}
		hasName, hasNumber := b.Service.Port.Name != "", b.Service.Port.Number != 0
		switch {
		case hasName && hasNumber:
			allErrs = append(allErrs, field.Invalid(fldPath, "", "cannot set both port name & port number"))
		case hasName:
			for _, msg := range validation.IsValidPortName(b.Service.Port.Name) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("service", "port", "name"), b.Service.Port.Name, msg))
			}
		case hasNumber:
			for _, msg := range validation.IsValidPortNum(int(b.Service.Port.Number)) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("service", "port", "number"), b.Service.Port.Number, msg))
			}
		default:
			allErrs = append(allErrs, field.Required(fldPath, "port name or number is required"))
		}
	default:
		allErrs = append(allErrs, field.Invalid(fldPath, "", "resource or service backend is required"))
	}
	return allErrs
}

// validateTypedLocalObjectReference: apiGroup a DNS subdomain if set;
// kind and name required path segments.
func validateTypedLocalObjectReference(apiGroup *string, kind, name string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if apiGroup != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*apiGroup) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("apiGroup"), *apiGroup, msg))
		}
	}
	if kind == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("kind"), "kind is required"))
	} else {
		for _, msg := range pathvalidation.IsValidPathSegmentName(kind) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("kind"), kind, msg))
		}
	}
	if name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), "name is required"))
	} else {
		for _, msg := range pathvalidation.IsValidPathSegmentName(name) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), name, msg))
		}
	}
	return allErrs
}

func validateIngressLoadBalancerStatus(s *networkingv1.IngressLoadBalancerStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, ing := range s.Ingress {
		idxPath := fldPath.Child("ingress").Index(i)
		if ing.IP != "" {
			allErrs = append(allErrs, validation.IsValidIPForLegacyField(idxPath.Child("ip"), ing.IP, true, nil)...)
		}
		if ing.Hostname != "" {
			for _, msg := range validation.IsDNS1123Subdomain(ing.Hostname) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("hostname"), ing.Hostname, msg))
			}
			if netutils.ParseIPSloppy(ing.Hostname) != nil {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("hostname"), ing.Hostname, "must be a DNS name, not an IP address"))
			}
		}
	}
	return allErrs
}

// IngressWarnings are the warnings of an Ingress: the deprecated class
// annotation (upstream's ingress strategy warning).
func IngressWarnings(ing *networkingv1.Ingress) []string {
	var warnings []string
	if _, ok := ing.Annotations[AnnotationIngressClass]; ok {
		warnings = append(warnings, "annotation \""+AnnotationIngressClass+"\" is deprecated, please use 'spec.ingressClassName' instead")
	}
	return slices.Clip(warnings)
}
