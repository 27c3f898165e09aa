package webhook_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
)

// BenchmarkAdmissionLatency: the latency of a ConfigMap create through
// the full stack (client-go, TLS, filters, storage on the memory backend)
// with no admission configuration, 1 and 5 webhooks (each a mutating
// webhook that answers allowed without a patch, on loopback HTTPS), and
// 10 ValidatingAdmissionPolicies with one validation each. Creates are
// sequential: the figure is the added latency per write.
func BenchmarkAdmissionLatency(b *testing.B) {
	for _, tc := range []struct {
		name     string
		webhooks int
		policies int
	}{
		{"none", 0, 0}, {"webhooks=1", 1, 0}, {"webhooks=5", 5, 0}, {"policies=10", 0, 10},
	} {
		b.Run(tc.name, func(b *testing.B) {
			hooks := startHooksTB(b)
			s := kapitest.Start(b)
			cfg := rest.CopyConfig(s.Config)
			cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit
			cs := kubernetes.NewForConfigOrDie(cfg)
			ctx := context.Background()
			ar := cs.AdmissionregistrationV1()
			if tc.webhooks > 0 {
				mwc := &arv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}
				for i := range tc.webhooks {
					mwc.Webhooks = append(mwc.Webhooks, mutatingHook(fmt.Sprintf("w%d.kapi.test", i),
						arv1.WebhookClientConfig{URL: hooks.url("/allow"), CABundle: hooks.caBundle},
						func(w *arv1.MutatingWebhook) { w.ObjectSelector = nil }))
				}
				if _, err := ar.MutatingWebhookConfigurations().Create(ctx, mwc, metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			for i := range tc.policies {
				name := "p" + strconv.Itoa(i)
				if _, err := ar.ValidatingAdmissionPolicies().Create(ctx, &arv1.ValidatingAdmissionPolicy{
					ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: arv1.ValidatingAdmissionPolicySpec{
						MatchConstraints: &arv1.MatchResources{ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
							Operations: []arv1.OperationType{arv1.Create},
							Rule:       arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
						}}}},
						Validations: []arv1.Validation{{Expression: "!has(object.data) || object.data.size() < 100"}},
					},
				}, metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
				if _, err := ar.ValidatingAdmissionPolicyBindings().Create(ctx, &arv1.ValidatingAdmissionPolicyBinding{
					ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec:       arv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name, ValidationActions: []arv1.ValidationAction{arv1.Deny}},
				}, metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			cms := cs.CoreV1().ConfigMaps("default")
			// Warm up (and let the configurations' watch events arrive).
			time.Sleep(200 * time.Millisecond)
			for i := range 50 {
				if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "warm" + strconv.Itoa(i)}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			before := hooks.count("/allow")
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm" + strconv.Itoa(i)}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if got := hooks.count("/allow") - before; got != b.N*tc.webhooks {
				b.Fatalf("webhook called %d times, want %d", got, b.N*tc.webhooks)
			}
		})
	}
}
