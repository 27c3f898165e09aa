package admissionregistration

import (
	"strings"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func validMutatingPolicy() *arv1.MutatingAdmissionPolicy {
	return &arv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: arv1.MutatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(arv1.Fail),
			MatchConstraints: &arv1.MatchResources{
				MatchPolicy: ptr.To(arv1.Equivalent), NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
				ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
					Operations: []arv1.OperationType{arv1.Create},
					Rule:       arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
				}}},
			},
			Mutations: []arv1.Mutation{{PatchType: arv1.PatchTypeApplyConfiguration, ApplyConfiguration: &arv1.ApplyConfiguration{
				Expression: `Object{metadata: Object.metadata{labels: {"a": "b"}}}`,
			}}},
			ReinvocationPolicy: arv1.NeverReinvocationPolicy,
		},
	}
}

// TestValidateMutatingPolicy: field paths, error types and messages of
// upstream's validateMutatingAdmissionPolicySpec, validateMutation and
// validateMutatingAdmissionPolicyBindingSpec (kubernetes/kubernetes
// pkg/apis/admissionregistration/validation/validation.go, the
// release-1.35 line carried into v1.37: mutations required, the
// patchType union, reinvocationPolicy required, DELETE not mutable).
// Compilation messages are cel-go's.
func TestValidateMutatingPolicy(t *testing.T) {
	jsonPatch := func(expr string) arv1.Mutation {
		return arv1.Mutation{PatchType: arv1.PatchTypeJSONPatch, JSONPatch: &arv1.JSONPatch{Expression: expr}}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*arv1.MutatingAdmissionPolicy)
		want   string
	}{
		{"valid", func(*arv1.MutatingAdmissionPolicy) {}, ""},
		{"valid json patch", func(p *arv1.MutatingAdmissionPolicy) {
			p.Spec.Mutations = []arv1.Mutation{jsonPatch(`[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("a/b"), value: "x"}]`)}
		}, ""},
		{"no failure policy", func(p *arv1.MutatingAdmissionPolicy) { p.Spec.FailurePolicy = nil }, "spec.failurePolicy: Required value"},
		{"bad failure policy", func(p *arv1.MutatingAdmissionPolicy) { p.Spec.FailurePolicy = ptr.To(arv1.FailurePolicyType("Maybe")) },
			`spec.failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"`},
		{"no match constraints", func(p *arv1.MutatingAdmissionPolicy) { p.Spec.MatchConstraints = nil }, "spec.matchConstraints: Required value"},
		{"no rules", func(p *arv1.MutatingAdmissionPolicy) { p.Spec.MatchConstraints.ResourceRules = nil }, "spec.matchConstraints.resourceRules: Required value"},
		{"delete", func(p *arv1.MutatingAdmissionPolicy) {
			p.Spec.MatchConstraints.ResourceRules[0].Operations = []arv1.OperationType{arv1.Delete}
		}, `spec.matchConstraints.resourceRules.operations: Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"`},
		{"no mutations", func(p *arv1.MutatingAdmissionPolicy) { p.Spec.Mutations = nil },
			"spec.mutations: Required value: mutations must contain at least one item"},
		{"no patch type", func(p *arv1.MutatingAdmissionPolicy) { p.Spec.Mutations[0].PatchType = "" }, "spec.mutations[0].patchType: Required value"},
		{"bad patch type", func(p *arv1.MutatingAdmissionPolicy) { p.Spec.Mutations[0].PatchType = "Merge" },
			`spec.mutations[0].patchType: Unsupported value: "Merge": supported values: "ApplyConfiguration", "JSONPatch"`},
		{"apply configuration missing", func(p *arv1.MutatingAdmissionPolicy) { p.Spec.Mutations[0].ApplyConfiguration = nil },
			"spec.mutations[0].applyConfiguration: Required value: must be specified when patchType is ApplyConfiguration"},
		{"json patch missing", func(p *arv1.MutatingAdmissionPolicy) {
			p.Spec.Mutations[0] = arv1.Mutation{PatchType: arv1.PatchTypeJSONPatch}
		},
			"spec.mutations[0].jsonPatch: Required value: must be specified when patchType is JSONPatch"},
		{"both", func(p *arv1.MutatingAdmissionPolicy) {
			p.Spec.Mutations[0].JSONPatch = &arv1.JSONPatch{Expression: "[]"}
		},
			`spec.mutations[0].jsonPatch: Invalid value: "{jsonPatch}": must not be specified when patchType is ApplyConfiguration`},
		{"empty expression", func(p *arv1.MutatingAdmissionPolicy) { p.Spec.Mutations[0].ApplyConfiguration.Expression = " " },
			"spec.mutations[0].applyConfiguration.expression: Required value"},
		{"apply configuration not an object", func(p *arv1.MutatingAdmissionPolicy) {
			p.Spec.Mutations[0].ApplyConfiguration.Expression = "'x'"
		}, `spec.mutations[0].applyConfiguration.expression: Invalid value: "'x'": compilation failed: must evaluate to Object but got string`},
		{"json patch not a list", func(p *arv1.MutatingAdmissionPolicy) {
			p.Spec.Mutations = []arv1.Mutation{jsonPatch(`JSONPatch{op: "remove", path: "/x"}`)}
		}, "spec.mutations[0].jsonPatch.expression: Invalid value: \"JSONPatch{op: \\\"remove\\\", path: \\\"/x\\\"}\": compilation failed: must evaluate to list(JSONPatch) but got JSONPatch"},
		{"json patch unknown field", func(p *arv1.MutatingAdmissionPolicy) {
			p.Spec.Mutations = []arv1.Mutation{jsonPatch(`[JSONPatch{op: "remove", where: "/x"}]`)}
		}, "undefined field 'where'"},
		{"no reinvocation policy", func(p *arv1.MutatingAdmissionPolicy) { p.Spec.ReinvocationPolicy = "" }, "spec.reinvocationPolicy: Required value"},
		{"bad reinvocation policy", func(p *arv1.MutatingAdmissionPolicy) { p.Spec.ReinvocationPolicy = "Always" },
			`spec.reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"`}, // sorted: kube-apiserver v1.37.2's answer
		{"match condition", func(p *arv1.MutatingAdmissionPolicy) {
			p.Spec.MatchConditions = []arv1.MatchCondition{{Name: "c", Expression: "'x'"}}
		}, `spec.matchConditions[0].expression: Invalid value: "'x'": compilation failed: must evaluate to bool`},
		{"variable name", func(p *arv1.MutatingAdmissionPolicy) {
			p.Spec.Variables = []arv1.Variable{{Name: "1x", Expression: "1"}}
		}, `spec.variables[0].name: Invalid value: "1x": name is not a valid CEL identifier`},
		{"param kind", func(p *arv1.MutatingAdmissionPolicy) { p.Spec.ParamKind = &arv1.ParamKind{APIVersion: "v1"} }, "spec.paramKind.kind: Required value"},
	} {
		p := validMutatingPolicy()
		tc.mutate(p)
		got := ValidateMutatingAdmissionPolicy(p).ToAggregate()
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s: %v", tc.name, got)
		case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
			t.Errorf("%s: got %v\nwant %s", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		spec arv1.MutatingAdmissionPolicyBindingSpec
		want string
	}{
		{"valid", arv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "p"}, ""},
		{"no policy", arv1.MutatingAdmissionPolicyBindingSpec{}, "spec.policyName: Required value"},
		{"bad policy name", arv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "P_1"}, `spec.policyName: Invalid value: "P_1": a lowercase RFC 1123 subdomain`},
		{"param ref empty", arv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "p", ParamRef: &arv1.ParamRef{ParameterNotFoundAction: ptr.To(arv1.DenyAction)}},
			"spec.paramRef: Required value: one of name or selector must be specified"},
		{"param ref both", arv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "p", ParamRef: &arv1.ParamRef{Name: "x", Selector: &metav1.LabelSelector{}, ParameterNotFoundAction: ptr.To(arv1.DenyAction)}},
			"spec.paramRef.name: Forbidden: name and selector are mutually exclusive"},
		{"param ref action", arv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "p", ParamRef: &arv1.ParamRef{Name: "x"}},
			"spec.paramRef.parameterNotFoundAction: Required value"},
		{"delete", arv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "p", MatchResources: &arv1.MatchResources{
			MatchPolicy: ptr.To(arv1.Equivalent), NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
			ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
				Operations: []arv1.OperationType{arv1.Delete},
				Rule:       arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
			}}},
		}}, `spec.matchResources.resourceRules.operations: Unsupported value: "DELETE"`},
	} {
		got := ValidateMutatingAdmissionPolicyBinding(&arv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: tc.spec}).ToAggregate()
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s: %v", tc.name, got)
		case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
			t.Errorf("%s: got %v\nwant %s", tc.name, got, tc.want)
		}
	}
}
