package admissionregistrationv1_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
)

// A MutatingAdmissionPolicy and its binding without the defaulted
// fields, decoded as request bodies are. Expected: upstream's
// pkg/apis/admissionregistration/v1/defaults.go (v1.37)
// SetDefaults_MutatingAdmissionPolicySpec (failurePolicy Fail) and
// SetDefaults_MatchResources / SetDefaults_Rule through
// zz_generated.defaults.go (matchPolicy Equivalent, empty selectors, rule
// scope "*"); reinvocationPolicy is not defaulted.
const mutatingManifest = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata:
  name: add-label
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"a": "b"}}}'
`

const mutatingBindingManifest = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: add-label
spec:
  policyName: add-label
  matchResources:
    excludeResourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["UPDATE"]
      resources: ["configmaps"]
`

func TestMutatingPolicyDefaults(t *testing.T) {
	dec := scheme.Codecs.UniversalDecoder(arv1.SchemeGroupVersion)
	obj, _, err := dec.Decode([]byte(mutatingManifest), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec := obj.(*arv1.MutatingAdmissionPolicy).Spec
	want := arv1.MutatingAdmissionPolicySpec{
		FailurePolicy: ptr.To(arv1.Fail),
		MatchConstraints: &arv1.MatchResources{
			MatchPolicy: ptr.To(arv1.Equivalent), NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
			ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
				Operations: []arv1.OperationType{arv1.Create},
				Rule:       arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}, Scope: ptr.To(arv1.AllScopes)},
			}}},
		},
		Mutations: []arv1.Mutation{{PatchType: arv1.PatchTypeApplyConfiguration, ApplyConfiguration: &arv1.ApplyConfiguration{
			Expression: `Object{metadata: Object.metadata{labels: {"a": "b"}}}`,
		}}},
	}
	if diff := cmp.Diff(want, spec); diff != "" {
		t.Errorf("policy defaults (-want +got):\n%s", diff)
	}
	obj, _, err = dec.Decode([]byte(mutatingBindingManifest), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantMatch := &arv1.MatchResources{
		MatchPolicy: ptr.To(arv1.Equivalent), NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
		ExcludeResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
			Operations: []arv1.OperationType{arv1.Update},
			Rule:       arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}, Scope: ptr.To(arv1.AllScopes)},
		}}},
	}
	if diff := cmp.Diff(wantMatch, obj.(*arv1.MutatingAdmissionPolicyBinding).Spec.MatchResources); diff != "" {
		t.Errorf("binding defaults (-want +got):\n%s", diff)
	}
}
