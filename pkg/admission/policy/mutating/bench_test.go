package mutating_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/kapitest"
)

// BenchmarkMutatingPolicyLatency: the latency of a ConfigMap create
// through the full stack (client-go, TLS, filters, admission, storage on
// the memory backend) with no policy and with 10 MutatingAdmissionPolicies
// (each with a binding) that each set one label, by ApplyConfiguration or
// by JSONPatch. Creates are sequential: the difference is the added
// latency per write.
func BenchmarkMutatingPolicyLatency(b *testing.B) {
	for _, tc := range []struct {
		name     string
		policies int
		mutation func(i int) arv1.Mutation
	}{
		{"none", 0, nil},
		{"apply=10", 10, func(i int) arv1.Mutation {
			return applyMutation(`Object{metadata: Object.metadata{labels: {"p` + strconv.Itoa(i) + `": "x"}}}`)
		}},
		{"jsonpatch=10", 10, func(i int) arv1.Mutation {
			return jsonPatchMutation(`[JSONPatch{op: "add", path: "/metadata/labels/p` + strconv.Itoa(i) + `", value: "x"}]`)
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := kapitest.Start(b)
			cfg := rest.CopyConfig(s.Config)
			cfg.QPS, cfg.Burst = -1, 0
			cs := kubernetes.NewForConfigOrDie(cfg)
			ctx := context.Background()
			ar := cs.AdmissionregistrationV1()
			for i := range tc.policies {
				name := "p" + strconv.Itoa(i)
				p := &arv1.MutatingAdmissionPolicy{
					ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: arv1.MutatingAdmissionPolicySpec{
						FailurePolicy: ptr.To(arv1.Fail), MatchConstraints: rules("configmaps"),
						Mutations: []arv1.Mutation{tc.mutation(i)}, ReinvocationPolicy: arv1.NeverReinvocationPolicy,
					},
				}
				if _, err := ar.MutatingAdmissionPolicies().Create(ctx, p, metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
				if _, err := ar.MutatingAdmissionPolicyBindings().Create(ctx, &arv1.MutatingAdmissionPolicyBinding{
					ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: arv1.MutatingAdmissionPolicyBindingSpec{PolicyName: name},
				}, metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			cms := cs.CoreV1().ConfigMaps("default")
			cm := func(name string) *corev1.ConfigMap {
				return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "bench"}}, Data: map[string]string{"k": "v"}}
			}
			// Wait until every policy is in effect, then warm up.
			deadline := time.Now().Add(15 * time.Second)
			for {
				got, err := cms.Create(ctx, cm("probe"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				if err != nil {
					b.Fatal(err)
				}
				if len(got.Labels) == 1+tc.policies {
					break
				}
				if time.Now().After(deadline) {
					b.Fatalf("policies not in effect: labels %v", got.Labels)
				}
				time.Sleep(50 * time.Millisecond)
			}
			for i := range 50 {
				if _, err := cms.Create(ctx, cm("warm"+strconv.Itoa(i)), metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, err := cms.Create(ctx, cm("cm"+strconv.Itoa(i)), metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
