package admissionregistration

import (
	"fmt"
	"slices"
	"strings"

	"cel.dev/cel-go/cel"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/admission/policy/validating"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation/declarative"
)

// Upstream's limits and accepted values (sorted as sets.List gives them).
const maxAuditAnnotations = 20

var (
	validationReasons = []string{"Forbidden", "Invalid", "RequestEntityTooLarge"}
	validationActions = []string{"Audit", "Deny", "Warn"}
	notFoundActions   = []string{"Allow", "Deny"}
)

// ValidateValidatingAdmissionPolicy checks a policy (create and update;
// upstream relaxes an update's unchanged expressions, kapi compiles them
// with the same environment, so they compile again).
func ValidateValidatingAdmissionPolicy(p *arv1.ValidatingAdmissionPolicy) field.ErrorList {
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
		errs = append(errs, validateMatchResources(spec.MatchConstraints, false, fp.Child("matchConstraints"))...)
	}
	if len(spec.Validations) == 0 && len(spec.AuditAnnotations) == 0 {
		// Both, as v1.37's validateValidatingAdmissionPolicySpec.
		errs = append(errs, field.Required(fp.Child("validations"), "validations or auditAnnotations must contain at least one item"))
		errs = append(errs, field.Required(fp.Child("auditAnnotations"), "validations or auditAnnotations must contain at least one item"))
	}
	for i, v := range spec.Validations {
		ip := fp.Child("validations").Index(i)
		if strings.TrimSpace(v.Expression) == "" {
			errs = append(errs, field.Required(ip.Child("expression"), "expression is not specified"))
		} else if _, err := validating.CompileBool(v.Expression); err != nil {
			errs = append(errs, field.Invalid(ip.Child("expression"), v.Expression, "compilation failed: "+err.Error()))
		}
		if strings.Contains(v.Message, "\n") {
			errs = append(errs, field.Invalid(ip.Child("message"), v.Message, "message must not contain line breaks"))
		} else if v.Message != "" && strings.TrimSpace(v.Message) == "" {
			errs = append(errs, field.Invalid(ip.Child("message"), v.Message, "message must be non-empty if specified"))
		}
		if v.Reason != nil && !slices.Contains(validationReasons, string(*v.Reason)) {
			errs = append(errs, field.NotSupported(ip.Child("reason"), *v.Reason, validationReasons))
		}
		if v.MessageExpression != "" {
			if _, err := validating.CompileString(v.MessageExpression); err != nil {
				errs = append(errs, field.Invalid(ip.Child("messageExpression"), v.MessageExpression, "compilation failed: "+err.Error()))
			}
		}
	}
	errs = append(errs, validatePolicyMatchConditions(spec.MatchConditions, validating.CompileBool, fp.Child("matchConditions"))...)
	for i, v := range spec.Variables {
		ip := fp.Child("variables").Index(i)
		if v.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), "name is not specified"))
		} else if !isCELIdentifier(v.Name) {
			errs = append(errs, field.Invalid(ip.Child("name"), v.Name, "name is not a valid CEL identifier"))
		}
		if v.Expression == "" {
			errs = append(errs, field.Required(ip.Child("expression"), "expression is not specified"))
		} else if _, err := validating.Compile(v.Expression, nil); err != nil {
			errs = append(errs, field.Invalid(ip.Child("expression"), v.Expression, "compilation failed: "+err.Error()))
		}
	}
	if len(spec.AuditAnnotations) > maxAuditAnnotations {
		errs = append(errs, field.TooMany(fp.Child("auditAnnotations"), len(spec.AuditAnnotations), maxAuditAnnotations))
	}
	keys := map[string]bool{}
	for i, a := range spec.AuditAnnotations {
		ip := fp.Child("auditAnnotations").Index(i)
		key := p.Name + "/" + a.Key
		if a.Key == "" {
			errs = append(errs, field.Required(ip.Child("key"), ""))
		} else {
			for _, msg := range utilvalidation.IsQualifiedName(key) {
				errs = append(errs, field.Invalid(ip.Child("key"), a.Key, msg))
			}
			if keys[a.Key] {
				errs = append(errs, field.Duplicate(ip.Child("key"), a.Key))
			}
			keys[a.Key] = true
		}
		if a.ValueExpression == "" {
			errs = append(errs, field.Required(ip.Child("valueExpression"), "valueExpression is not specified"))
		} else if _, err := validating.CompileString(a.ValueExpression); err != nil {
			errs = append(errs, field.Invalid(ip.Child("valueExpression"), a.ValueExpression, "compilation failed: "+err.Error()))
		}
	}
	return errs
}

func isCELIdentifier(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

func validateParamKind(pk *arv1.ParamKind, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if pk.APIVersion == "" {
		errs = append(errs, field.Required(p.Child("apiVersion"), ""))
	} else if gv, err := schema.ParseGroupVersion(pk.APIVersion); err != nil {
		errs = append(errs, field.Invalid(p.Child("apiVersion"), pk.APIVersion, err.Error()))
	} else if gv.Group != "" {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(gv.Group) {
			errs = append(errs, field.Invalid(p.Child("apiVersion"), gv.Group, msg))
		}
	}
	if pk.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	} else if msgs := utilvalidation.IsDNS1035Label(strings.ToLower(pk.Kind)); len(msgs) > 0 {
		errs = append(errs, field.Invalid(p.Child("kind"), pk.Kind, "may have mixed case, but should otherwise match: "+strings.Join(msgs, ",")))
	}
	return errs
}

func validatePolicyMatchConditions(conds []arv1.MatchCondition, compile func(string) (cel.Program, error), p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(conds) > 64 {
		errs = append(errs, field.TooMany(p, len(conds), 64))
	}
	names := map[string]bool{}
	for i, c := range conds {
		ip := p.Index(i)
		if c.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else {
			for _, msg := range utilvalidation.IsQualifiedName(c.Name) {
				errs = append(errs, field.Invalid(ip.Child("name"), c.Name, msg))
			}
			if names[c.Name] {
				errs = append(errs, field.Duplicate(ip.Child("name"), c.Name))
			}
			names[c.Name] = true
		}
		if c.Expression == "" {
			errs = append(errs, field.Required(ip.Child("expression"), ""))
		} else if _, err := compile(c.Expression); err != nil {
			errs = append(errs, field.Invalid(ip.Child("expression"), c.Expression, "compilation failed: "+err.Error()))
		}
	}
	return errs
}

func validateMatchResources(m *arv1.MatchResources, allowEmptyRules bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if m.MatchPolicy == nil {
		errs = append(errs, field.Required(p.Child("matchPolicy"), ""))
	} else if !slices.Contains(matchPolicies, string(*m.MatchPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("matchPolicy"), *m.MatchPolicy, matchPolicies))
	}
	sel := metav1validation.LabelSelectorValidationOptions{}
	if m.NamespaceSelector == nil {
		errs = append(errs, field.Required(p.Child("namespaceSelector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(m.NamespaceSelector, sel, p.Child("namespaceSelector"))...)
	}
	if m.ObjectSelector == nil {
		errs = append(errs, field.Required(p.Child("objectSelector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(m.ObjectSelector, sel, p.Child("objectSelector"))...)
	}
	if len(m.ResourceRules) == 0 && !allowEmptyRules {
		errs = append(errs, field.Required(p.Child("resourceRules"), ""))
	}
	for i := range m.ResourceRules {
		errs = append(errs, validateNamedRule(&m.ResourceRules[i], p.Child("resourceRules").Index(i))...)
	}
	for i := range m.ExcludeResourceRules {
		errs = append(errs, validateNamedRule(&m.ExcludeResourceRules[i], p.Child("excludeResourceRules").Index(i))...)
	}
	return errs
}

func validateNamedRule(r *arv1.NamedRuleWithOperations, p *field.Path) field.ErrorList {
	errs := validateRuleWithOperations(&arv1.RuleWithOperations{Operations: r.Operations, Rule: r.Rule}, p)
	seen := map[string]bool{}
	for i, n := range r.ResourceNames {
		if seen[n] {
			errs = append(errs, field.Duplicate(p.Child("resourceNames").Index(i), n))
		}
		seen[n] = true
		for _, msg := range utilvalidation.IsDNS1123Subdomain(n) {
			errs = append(errs, field.Invalid(p.Child("resourceNames").Index(i), n, msg))
		}
	}
	return errs
}

// ValidateValidatingAdmissionPolicyBinding checks a binding.
func ValidateValidatingAdmissionPolicyBinding(b *arv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	spec := &b.Spec
	fp := field.NewPath("spec")
	var errs field.ErrorList
	if spec.PolicyName == "" {
		// Upstream's +k8s:required (beta) on policyName.
		errs = append(errs, declarative.Required(fp.Child("policyName")))
	} else {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(spec.PolicyName) {
			errs = append(errs, field.Invalid(fp.Child("policyName"), spec.PolicyName, msg))
		}
	}
	if r := spec.ParamRef; r != nil {
		errs = append(errs, validateParamRef(r, fp.Child("paramRef"))...)
	}
	if spec.MatchResources != nil {
		errs = append(errs, validateMatchResources(spec.MatchResources, true, fp.Child("matchResources"))...)
	}
	ap := fp.Child("validationActions")
	if len(spec.ValidationActions) == 0 {
		// +k8s:required (beta) on validationActions.
		errs = append(errs, declarative.Required(ap))
	}
	seen := map[arv1.ValidationAction]bool{}
	for i, a := range spec.ValidationActions {
		if !slices.Contains(validationActions, string(a)) {
			errs = append(errs, field.NotSupported(ap.Index(i), a, validationActions))
		}
		if seen[a] {
			errs = append(errs, field.Duplicate(ap.Index(i), a))
		}
		seen[a] = true
	}
	if seen[arv1.Deny] && seen[arv1.Warn] {
		errs = append(errs, field.Invalid(ap, spec.ValidationActions, fmt.Sprintf("must not contain both %s and %s (repeating the same validation failure information in the API response and headers serves no purpose)", arv1.Deny, arv1.Warn)))
	}
	return errs
}
