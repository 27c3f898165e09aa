package admissionregistration

import (
	"strings"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func validPolicy() *arv1.ValidatingAdmissionPolicy {
	return &arv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: arv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(arv1.Fail),
			MatchConstraints: &arv1.MatchResources{
				MatchPolicy: ptr.To(arv1.Equivalent), NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
				ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
					Operations: []arv1.OperationType{arv1.Create},
					Rule:       arv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
				}}},
			},
			Validations: []arv1.Validation{{Expression: "object.spec.replicas <= 5"}},
		},
	}
}

// TestValidatePolicy: field paths and messages of upstream's
// ValidateValidatingAdmissionPolicy and
// ValidateValidatingAdmissionPolicyBinding (kubernetes/kubernetes
// pkg/apis/admissionregistration/validation/validation.go, v1.37).
func TestValidatePolicy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*arv1.ValidatingAdmissionPolicy)
		want   string
	}{
		{"valid", func(*arv1.ValidatingAdmissionPolicy) {}, ""},
		{"no failure policy", func(p *arv1.ValidatingAdmissionPolicy) { p.Spec.FailurePolicy = nil }, "spec.failurePolicy: Required value"},
		{"no match constraints", func(p *arv1.ValidatingAdmissionPolicy) { p.Spec.MatchConstraints = nil }, "spec.matchConstraints: Required value"},
		{"no rules", func(p *arv1.ValidatingAdmissionPolicy) { p.Spec.MatchConstraints.ResourceRules = nil }, "spec.matchConstraints.resourceRules: Required value"},
		{"nothing to check", func(p *arv1.ValidatingAdmissionPolicy) { p.Spec.Validations = nil },
			// kube-apiserver v1.37.2 names both fields.
			"spec.validations: Required value: validations or auditAnnotations must contain at least one item, spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item"},
		{"bad expression", func(p *arv1.ValidatingAdmissionPolicy) { p.Spec.Validations[0].Expression = "object.spec.replicas <=" },
			`spec.validations[0].expression: Invalid value: "object.spec.replicas <=": compilation failed: `},
		{"not bool", func(p *arv1.ValidatingAdmissionPolicy) { p.Spec.Validations[0].Expression = "'yes'" },
			`spec.validations[0].expression: Invalid value: "'yes'": compilation failed: must evaluate to bool`},
		{"reason", func(p *arv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations[0].Reason = ptr.To(metav1.StatusReasonConflict)
		},
			`spec.validations[0].reason: Unsupported value: "Conflict": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge"`},
		{"message line break", func(p *arv1.ValidatingAdmissionPolicy) { p.Spec.Validations[0].Message = "a\nb" },
			`spec.validations[0].message: Invalid value: "a\nb": message must not contain line breaks`},
		{"param kind", func(p *arv1.ValidatingAdmissionPolicy) { p.Spec.ParamKind = &arv1.ParamKind{APIVersion: "v1"} }, "spec.paramKind.kind: Required value"},
		{"variable name", func(p *arv1.ValidatingAdmissionPolicy) {
			p.Spec.Variables = []arv1.Variable{{Name: "1x", Expression: "1"}}
		}, `spec.variables[0].name: Invalid value: "1x": name is not a valid CEL identifier`},
	} {
		p := validPolicy()
		tc.mutate(p)
		got := ValidateValidatingAdmissionPolicy(p).ToAggregate()
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s: %v", tc.name, got)
		case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
			t.Errorf("%s: got %v\nwant %s", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		spec arv1.ValidatingAdmissionPolicyBindingSpec
		want string
	}{
		{"valid", arv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ValidationActions: []arv1.ValidationAction{arv1.Deny}}, ""},
		{"no policy", arv1.ValidatingAdmissionPolicyBindingSpec{ValidationActions: []arv1.ValidationAction{arv1.Deny}}, "spec.policyName: Required value"},
		{"no actions", arv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p"}, "spec.validationActions: Required value"},
		{"deny and warn", arv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ValidationActions: []arv1.ValidationAction{arv1.Deny, arv1.Warn}},
			`spec.validationActions: Invalid value: ["Deny","Warn"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)`},
		{"unknown action", arv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ValidationActions: []arv1.ValidationAction{"Log"}},
			`spec.validationActions[0]: Unsupported value: "Log": supported values: "Audit", "Deny", "Warn"`},
		{"paramRef without action", arv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ValidationActions: []arv1.ValidationAction{arv1.Deny},
			ParamRef: &arv1.ParamRef{Name: "x"}}, "spec.paramRef.parameterNotFoundAction: Required value"},
	} {
		got := ValidateValidatingAdmissionPolicyBinding(&arv1.ValidatingAdmissionPolicyBinding{Spec: tc.spec}).ToAggregate()
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s: %v", tc.name, got)
		case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
			t.Errorf("%s: got %v\nwant %s", tc.name, got, tc.want)
		}
	}
}
