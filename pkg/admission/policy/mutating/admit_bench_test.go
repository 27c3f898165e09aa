package mutating

import (
	"context"
	"strconv"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/admission/configsource/configsourcetest"
	"github.com/kapi-dev/kapi/pkg/endpoints/fieldmanager"
)

// BenchmarkAdmit: the plugin's own cost per write (no HTTP, no storage):
// Admit of a ConfigMap create with 10 policies, each setting one label by
// ApplyConfiguration or by JSONPatch, the mutated object written back.
func BenchmarkAdmit(b *testing.B) {
	for _, tc := range []struct {
		name string
		mut  func(i int) arv1.Mutation
	}{
		{"apply=10", func(i int) arv1.Mutation {
			return arv1.Mutation{PatchType: arv1.PatchTypeApplyConfiguration, ApplyConfiguration: &arv1.ApplyConfiguration{
				Expression: `Object{metadata: Object.metadata{labels: {"p` + strconv.Itoa(i) + `": "x"}}}`}}
		}},
		{"jsonpatch=10", func(i int) arv1.Mutation {
			return arv1.Mutation{PatchType: arv1.PatchTypeJSONPatch, JSONPatch: &arv1.JSONPatch{
				Expression: `[JSONPatch{op: "add", path: "/metadata/labels/p` + strconv.Itoa(i) + `", value: "x"}]`}}
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var pl arv1.MutatingAdmissionPolicyList
			var bl arv1.MutatingAdmissionPolicyBindingList
			for i := range 10 {
				name := "p" + strconv.Itoa(i)
				pl.Items = append(pl.Items, arv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: arv1.MutatingAdmissionPolicySpec{
					FailurePolicy: ptr.To(arv1.Fail),
					MatchConstraints: &arv1.MatchResources{ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
						Operations: []arv1.OperationType{arv1.Create},
						Rule:       arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
					}}}},
					Mutations: []arv1.Mutation{tc.mut(i)}, ReinvocationPolicy: arv1.NeverReinvocationPolicy,
				}})
				bl.Items = append(bl.Items, arv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: arv1.MutatingAdmissionPolicyBindingSpec{PolicyName: name}})
			}
			p := New(configsourcetest.Static{Objects: &pl}, configsourcetest.Static{Objects: &bl}, Options{TypeConverter: fieldmanager.TypeConverter})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); p.Run(ctx) }()
			defer func() { cancel(); <-done }()
			attrs := func() admission.Attributes {
				cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
					ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default", Labels: map[string]string{"app": "x"}}, Data: map[string]string{"k": "v"}}
				return admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("configmaps"),
					Kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"), Namespace: "default", Name: "c", Object: cm}
			}
			a := attrs()
			if err := p.Admit(ctx, a); err != nil {
				b.Fatal(err)
			}
			if n := len(a.Object.(*corev1.ConfigMap).Labels); n != 11 {
				b.Fatalf("labels %d, want 11", n)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := p.Admit(ctx, attrs()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
