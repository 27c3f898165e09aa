package networking

import (
	networkingv1 "k8s.io/api/networking/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kvalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation"
)

// maxLenIngressClassController is the longest spec.controller accepted.
const maxLenIngressClassController = 250

// supportedParameterScopes, sorted as upstream lists them.
var supportedParameterScopes = []string{networkingv1.IngressClassParametersReferenceScopeCluster, networkingv1.IngressClassParametersReferenceScopeNamespace}

// ValidateIngressClass checks a class with its metadata.
func ValidateIngressClass(ic *networkingv1.IngressClass) field.ErrorList {
	allErrs := kvalidation.ValidateObjectMeta(&ic.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, ValidateIngressClassFields(ic)...)
}

// ValidateIngressClassFields checks a class's spec: controller a
// domain-prefixed path of at most 250 characters, parameters a valid
// reference with a scope.
func ValidateIngressClassFields(ic *networkingv1.IngressClass) field.ErrorList {
	fldPath := field.NewPath("spec")
	var allErrs field.ErrorList
	if len(ic.Spec.Controller) > maxLenIngressClassController {
		allErrs = append(allErrs, field.TooLong(fldPath.Child("controller"), "", maxLenIngressClassController))
	}
	allErrs = append(allErrs, validation.IsDomainPrefixedPath(fldPath.Child("controller"), ic.Spec.Controller)...)
	return append(allErrs, validateIngressClassParameters(ic.Spec.Parameters, fldPath.Child("parameters"))...)
}

// ValidateIngressClassUpdate checks an update with its metadata.
func ValidateIngressClassUpdate(ic, old *networkingv1.IngressClass) field.ErrorList {
	allErrs := kvalidation.ValidateObjectMetaUpdate(&ic.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidateIngressClassUpdateFields(ic, old)...)
}

// ValidateIngressClassUpdateFields: the spec is valid and the controller
// unchanged.
func ValidateIngressClassUpdateFields(ic, old *networkingv1.IngressClass) field.ErrorList {
	allErrs := ValidateIngressClassFields(ic)
	return append(allErrs, kvalidation.ValidateImmutableField(ic.Spec.Controller, old.Spec.Controller, field.NewPath("spec", "controller"))...)
}

func validateIngressClassParameters(p *networkingv1.IngressClassParametersReference, fldPath *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	allErrs := validateTypedLocalObjectReference(p.APIGroup, p.Kind, p.Name, fldPath)
	// Upstream's +k8s:required (beta) on IngressClassParametersReference's
	// kind and name answers their absence, without the handwritten detail.
	for _, e := range allErrs {
		if e.Type == field.ErrorTypeRequired {
			e.Detail = ""
			e.MarkCoveredByDeclarative().MarkBeta()
		}
	}
	if p.Scope == nil {
		return append(allErrs, field.Required(fldPath.Child("scope"), ""))
	}
	switch *p.Scope {
	case networkingv1.IngressClassParametersReferenceScopeNamespace:
		if p.Namespace == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("namespace"), "`parameters.scope` is set to 'Namespace'"))
		} else {
			for _, msg := range apimachineryvalidation.ValidateNamespaceName(*p.Namespace, false) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("namespace"), *p.Namespace, msg))
			}
		}
	case networkingv1.IngressClassParametersReferenceScopeCluster:
		if p.Namespace != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("namespace"), "`parameters.scope` is set to 'Cluster'"))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("scope"), *p.Scope, supportedParameterScopes))
	}
	return allErrs
}
