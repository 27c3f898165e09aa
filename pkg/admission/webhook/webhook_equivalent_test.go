package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestMatchPolicyEquivalent: a webhook registered for autoscaling/v1
// horizontalpodautoscalers (matchPolicy Equivalent, the default) is sent
// an autoscaling/v2 request converted to v1 (kind and resource v1,
// requestKind and requestResource v2), and its patch lands in the stored
// object; with matchPolicy Exact it is not called.
func TestMatchPolicyEquivalent(t *testing.T) {
	hooks := startHooks(t)
	s := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(s.Config)
	ctx := context.Background()
	rule := []arv1.RuleWithOperations{{Operations: []arv1.OperationType{arv1.Create},
		Rule: arv1.Rule{APIGroups: []string{"autoscaling"}, APIVersions: []string{"v1"}, Resources: []string{"horizontalpodautoscalers"}}}}
	if _, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &arv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "hpa"},
		Webhooks: []arv1.MutatingWebhook{
			mutatingHook("equivalent.kapi.test", arv1.WebhookClientConfig{URL: hooks.url("/label"), CABundle: hooks.caBundle}, func(w *arv1.MutatingWebhook) {
				w.ObjectSelector, w.Rules = nil, rule
			}),
			mutatingHook("exact.kapi.test", arv1.WebhookClientConfig{URL: hooks.url("/exact"), CABundle: hooks.caBundle}, func(w *arv1.MutatingWebhook) {
				w.ObjectSelector, w.Rules, w.MatchPolicy = nil, rule, ptr.To(arv1.Exact)
			}),
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hpa := func(name string) *autoscalingv2.HorizontalPodAutoscaler {
		return &autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
				MinReplicas:    ptr.To[int32](1), MaxReplicas: 5,
			},
		}
	}
	v2 := cs.AutoscalingV2().HorizontalPodAutoscalers("default")
	var got *autoscalingv2.HorizontalPodAutoscaler
	attempt := 0
	eventually(t, "webhook in effect", func() bool {
		var err error
		attempt++
		got, err = v2.Create(ctx, hpa(fmt.Sprintf("h%d", attempt)), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got.Labels["label"] != ""
	})
	hooks.mu.Lock()
	req := hooks.requests["/label"]
	hooks.mu.Unlock()
	if req.Kind.Version != "v1" || req.Resource.Version != "v1" || req.RequestKind == nil || req.RequestKind.Version != "v2" || req.RequestResource.Version != "v2" {
		t.Errorf("review kind %v resource %v requestKind %v requestResource %v, want v1 sent for a v2 request", req.Kind, req.Resource, req.RequestKind, req.RequestResource)
	}
	var sent autoscalingv1.HorizontalPodAutoscaler
	if err := jsonUnmarshal(req.Object.Raw, &sent); err != nil || sent.APIVersion != "autoscaling/v1" || sent.Spec.MaxReplicas != 5 {
		t.Errorf("object sent: %+v (%v), want the autoscaling/v1 form", sent, err)
	}
	stored, err := v2.Get(ctx, got.Name, metav1.GetOptions{})
	if err != nil || stored.Labels["label"] != "0" || stored.Spec.MaxReplicas != 5 || stored.Spec.ScaleTargetRef.Name != "web" {
		t.Errorf("stored %+v (%v), want the webhook's label on the unchanged autoscaler", stored, err)
	}
	if n := hooks.count("/exact"); n != 0 {
		t.Errorf("the Exact webhook was called %d times for autoscaling/v2 requests", n)
	}
	// A v1 request reaches both.
	if _, err := cs.AutoscalingV1().HorizontalPodAutoscalers("default").Create(ctx, &autoscalingv1.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "v1"},
		Spec:       autoscalingv1.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"}, MaxReplicas: 3},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := hooks.count("/exact"); n != 1 {
		t.Errorf("the Exact webhook was called %d times for an autoscaling/v1 request, want 1", n)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
