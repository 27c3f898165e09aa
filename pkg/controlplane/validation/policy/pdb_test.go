package policy

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// Expected errors are upstream's (kubernetes/kubernetes v1.37
// pkg/apis/policy/validation/validation.go and apps' int-or-percent
// checks), "<type> <field>: <detail>".

func errStrings(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, fmt.Sprintf("%s %s: %s", string(e.Type), e.Field, e.Detail))
	}
	return out
}

func validPDB() *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "zk-pdb", Namespace: "ns"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(2)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "zookeeper"}},
		},
	}
}

func TestValidatePodDisruptionBudget(t *testing.T) {
	if errs := ValidatePodDisruptionBudget(validPDB(), Options{}); len(errs) != 0 {
		t.Fatalf("valid budget: %v", errs)
	}
	tests := []struct {
		name   string
		mutate func(*policyv1.PodDisruptionBudget)
		want   []string
	}{
		{"both set", func(p *policyv1.PodDisruptionBudget) { p.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(1)) },
			[]string{"FieldValueInvalid spec: minAvailable and maxUnavailable cannot be both set"}},
		{"over 100%", func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = ptr.To(intstr.FromString("150%")) },
			[]string{"FieldValueInvalid spec.minAvailable: must not be greater than 100%"}},
		{"negative", func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = ptr.To(intstr.FromInt32(-1)) },
			[]string{"FieldValueInvalid spec.minAvailable: must be greater than or equal to 0"}},
		{"not a percent", func(p *policyv1.PodDisruptionBudget) {
			p.Spec.MinAvailable = nil
			p.Spec.MaxUnavailable = ptr.To(intstr.FromString("half"))
		}, []string{`FieldValueInvalid spec.maxUnavailable: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')`}},
		{"bad selector", func(p *policyv1.PodDisruptionBudget) {
			p.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Like"}}}
		}, []string{`FieldValueInvalid spec.selector.matchExpressions[0].operator: not a valid selector operator`}},
		{"unhealthyPodEvictionPolicy", func(p *policyv1.PodDisruptionBudget) {
			p.Spec.UnhealthyPodEvictionPolicy = ptr.To[policyv1.UnhealthyPodEvictionPolicyType]("Never")
		}, []string{`FieldValueNotSupported spec.unhealthyPodEvictionPolicy: supported values: "AlwaysAllow", "IfHealthyBudget"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := validPDB()
			tc.mutate(p)
			if diff := cmp.Diff(tc.want, errStrings(ValidatePodDisruptionBudget(p, Options{}))); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidatePodDisruptionBudgetStatusUpdate(t *testing.T) {
	status := policyv1.PodDisruptionBudgetStatus{
		DisruptionsAllowed: -1, CurrentHealthy: -1, DesiredHealthy: -1, ExpectedPods: -1,
		Conditions: []metav1.Condition{{Type: "DisruptionAllowed", Status: "Maybe", Reason: "x"}},
	}
	got := errStrings(ValidatePodDisruptionBudgetStatusUpdate(status, field.NewPath("status")))
	want := []string{
		`FieldValueNotSupported status.conditions[0].status: supported values: "False", "True", "Unknown"`,
		"FieldValueRequired status.conditions[0].lastTransitionTime: ",
		"FieldValueInvalid status.disruptionsAllowed: must be greater than or equal to 0",
		"FieldValueInvalid status.currentHealthy: must be greater than or equal to 0",
		"FieldValueInvalid status.desiredHealthy: must be greater than or equal to 0",
		"FieldValueInvalid status.expectedPods: must be greater than or equal to 0",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}
