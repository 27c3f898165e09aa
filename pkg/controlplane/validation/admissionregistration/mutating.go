package admissionregistration

import (
	"slices"
	"strings"

	arv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/admission/policy/mutating"
)

// Accepted values (sorted as sets.List gives them): a mutating policy
// may not match DELETE.
var (
	mutatingOperations = []string{"*", "CONNECT", "CREATE", "UPDATE"}
	patchTypes         = []string{"ApplyConfiguration", "JSONPatch"}
	reinvocationTypes  = []string{"IfNeeded", "Never"}
)

// ValidateMutatingAdmissionPolicy checks a MutatingAdmissionPolicy as
// upstream's validateMutatingAdmissionPolicySpec (kubernetes/kubernetes
// pkg/apis/admissionregistration/validation/validation.go): same field
// paths, error types and messages; expressions are compiled with the
// plugin's environment (package admission/policy/mutating).
func ValidateMutatingAdmissionPolicy(p *arv1.MutatingAdmissionPolicy) field.ErrorList {
	spec := &p.Spec
	fp := field.NewPath("spec")
	var errs field.ErrorList
	if spec.FailurePolicy == nil {
		errs = append(errs, field.Required(fp.Child("failurePolicy"), ""))
	} else if !slices.Contains(failurePolicies, string(*spec.FailurePolicy)) {
		errs = append(errs, field.NotSupported(fp.Child("failurePolicy"), *spec.FailurePolicy, failurePolicies))
	}
	if spec.ParamKind != nil {
		errs = append(errs, validateParamKind(spec.ParamKind, fp.Child("paramKind"))...)
	}
	if spec.MatchConstraints == nil {
		errs = append(errs, field.Required(fp.Child("matchConstraints"), ""))
	} else {
		mp := fp.Child("matchConstraints")
		errs = append(errs, validateMatchResources(spec.MatchConstraints, false, mp)...)
		errs = append(errs, validateMutatingOperations(spec.MatchConstraints, mp.Child("resourceRules").Child("operations"))...)
	}
	errs = append(errs, validatePolicyMatchConditions(spec.MatchConditions, mutating.CompileBool, fp.Child("matchConditions"))...)
	for i, v := range spec.Variables {
		ip := fp.Child("variables").Index(i)
		if v.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), "name is not specified"))
		} else if !isCELIdentifier(v.Name) {
			errs = append(errs, field.Invalid(ip.Child("name"), v.Name, "name is not a valid CEL identifier"))
		}
		if v.Expression == "" {
			errs = append(errs, field.Required(ip.Child("expression"), "expression is not specified"))
		} else if _, err := mutating.CompileVariable(v.Expression); err != nil {
			errs = append(errs, field.Invalid(ip.Child("expression"), v.Expression, "compilation failed: "+err.Error()))
		}
	}
	if len(spec.Mutations) == 0 {
		errs = append(errs, field.Required(fp.Child("mutations"), "mutations must contain at least one item"))
	}
	for i := range spec.Mutations {
		errs = append(errs, validateMutation(&spec.Mutations[i], fp.Child("mutations").Index(i))...)
	}
	rp := fp.Child("reinvocationPolicy")
	switch {
	case spec.ReinvocationPolicy == "":
		errs = append(errs, field.Required(rp, ""))
	case !slices.Contains(reinvocationTypes, string(spec.ReinvocationPolicy)):
		errs = append(errs, field.NotSupported(rp, spec.ReinvocationPolicy, reinvocationTypes))
	}
	return errs
}

// validateMutatingOperations: only CREATE, UPDATE and CONNECT may be
// mutated (upstream reports the operation under
// resourceRules.operations, without indexes).
func validateMutatingOperations(m *arv1.MatchResources, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, r := range m.ResourceRules {
		for _, op := range r.Operations {
			if !slices.Contains(mutatingOperations, string(op)) {
				errs = append(errs, field.NotSupported(p, op, mutatingOperations))
			}
		}
	}
	return errs
}

func validateMutation(m *arv1.Mutation, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	ap, jp := p.Child("applyConfiguration"), p.Child("jsonPatch")
	switch m.PatchType {
	case "":
		errs = append(errs, field.Required(p.Child("patchType"), ""))
	case arv1.PatchTypeApplyConfiguration:
		if m.ApplyConfiguration == nil {
			errs = append(errs, field.Required(ap, "must be specified when patchType is ApplyConfiguration"))
		} else {
			errs = append(errs, validateMutationExpression(m.ApplyConfiguration.Expression, mutating.CompileApplyConfiguration, ap.Child("expression"))...)
		}
		if m.JSONPatch != nil {
			errs = append(errs, field.Invalid(jp, "{jsonPatch}", "must not be specified when patchType is ApplyConfiguration"))
		}
	case arv1.PatchTypeJSONPatch:
		if m.JSONPatch == nil {
			errs = append(errs, field.Required(jp, "must be specified when patchType is JSONPatch"))
		} else {
			errs = append(errs, validateMutationExpression(m.JSONPatch.Expression, mutating.CompileJSONPatch, jp.Child("expression"))...)
		}
		if m.ApplyConfiguration != nil {
			errs = append(errs, field.Invalid(ap, "{applyConfiguration}", "must not be specified when patchType is JSONPatch"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("patchType"), m.PatchType, patchTypes))
	}
	return errs
}

func validateMutationExpression[T any](expr string, compile func(string) (T, error), p *field.Path) field.ErrorList {
	if strings.TrimSpace(expr) == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if _, err := compile(expr); err != nil {
		return field.ErrorList{field.Invalid(p, expr, "compilation failed: "+err.Error())}
	}
	return nil
}

// ValidateMutatingAdmissionPolicyBinding checks a binding as upstream's
// validateMutatingAdmissionPolicyBindingSpec.
func ValidateMutatingAdmissionPolicyBinding(b *arv1.MutatingAdmissionPolicyBinding) field.ErrorList {
	spec := &b.Spec
	fp := field.NewPath("spec")
	var errs field.ErrorList
	if spec.PolicyName == "" {
		errs = append(errs, field.Required(fp.Child("policyName"), ""))
	} else {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(spec.PolicyName) {
			errs = append(errs, field.Invalid(fp.Child("policyName"), spec.PolicyName, msg))
		}
	}
	if r := spec.ParamRef; r != nil {
		errs = append(errs, validateParamRef(r, fp.Child("paramRef"))...)
	}
	if spec.MatchResources != nil {
		mp := fp.Child("matchResources")
		errs = append(errs, validateMatchResources(spec.MatchResources, true, mp)...)
		errs = append(errs, validateMutatingOperations(spec.MatchResources, mp.Child("resourceRules").Child("operations"))...)
	}
	return errs
}

// validateParamRef is upstream's validateParamRef: name a path segment;
// name and selector exclusive, each reported at its own path; one of them
// required; parameterNotFoundAction Deny or Allow.
func validateParamRef(r *arv1.ParamRef, rp *field.Path) field.ErrorList {
	var errs field.ErrorList
	if r.Name != "" {
		for _, msg := range content.IsPathSegmentName(r.Name) {
			errs = append(errs, field.Invalid(rp.Child("name"), r.Name, msg))
		}
		if r.Selector != nil {
			errs = append(errs, field.Forbidden(rp.Child("name"), "name and selector are mutually exclusive"))
		}
	}
	if r.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(r.Selector, metav1validation.LabelSelectorValidationOptions{}, rp.Child("selector"))...)
		if r.Name != "" {
			errs = append(errs, field.Forbidden(rp.Child("selector"), "name and selector are mutually exclusive"))
		}
	}
	if r.Name == "" && r.Selector == nil {
		errs = append(errs, field.Required(rp, "one of name or selector must be specified"))
	}
	if r.ParameterNotFoundAction == nil || *r.ParameterNotFoundAction == "" {
		errs = append(errs, field.Required(rp.Child("parameterNotFoundAction"), ""))
	} else if !slices.Contains(notFoundActions, string(*r.ParameterNotFoundAction)) {
		errs = append(errs, field.NotSupported(rp.Child("parameterNotFoundAction"), *r.ParameterNotFoundAction, notFoundActions))
	}
	return errs
}
