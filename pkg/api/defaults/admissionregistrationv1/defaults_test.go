package admissionregistrationv1_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
)

// The manifest of the documentation's example
// (https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/),
// decoded as a request body is; the expected defaults are upstream's
// pkg/apis/admissionregistration/v1/defaults.go (v1.37): failurePolicy
// Fail, matchPolicy Equivalent, empty selectors, timeoutSeconds 10,
// reinvocationPolicy Never, rule scope "*", service port 443.
const manifest = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: my-webhook.example.com
webhooks:
- name: my-webhook.example.com
  rules:
  - apiGroups: [""]
    apiVersions: ["v1"]
    operations: ["CREATE"]
    resources: ["pods"]
  clientConfig:
    service:
      namespace: example-namespace
      name: example-service
  admissionReviewVersions: ["v1"]
  sideEffects: None
`

func TestDefaults(t *testing.T) {
	obj, _, err := scheme.Codecs.UniversalDecoder(arv1.SchemeGroupVersion).Decode([]byte(manifest), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := obj.(*arv1.MutatingWebhookConfiguration).Webhooks[0]
	want := arv1.MutatingWebhook{
		Name: "my-webhook.example.com",
		ClientConfig: arv1.WebhookClientConfig{Service: &arv1.ServiceReference{
			Namespace: "example-namespace", Name: "example-service", Port: ptr.To[int32](443),
		}},
		Rules: []arv1.RuleWithOperations{{Operations: []arv1.OperationType{arv1.Create}, Rule: arv1.Rule{
			APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}, Scope: ptr.To(arv1.AllScopes),
		}}},
		FailurePolicy:           ptr.To(arv1.Fail),
		MatchPolicy:             ptr.To(arv1.Equivalent),
		NamespaceSelector:       &metav1.LabelSelector{},
		ObjectSelector:          &metav1.LabelSelector{},
		SideEffects:             ptr.To(arv1.SideEffectClassNone),
		TimeoutSeconds:          ptr.To[int32](10),
		AdmissionReviewVersions: []string{"v1"},
		ReinvocationPolicy:      ptr.To(arv1.NeverReinvocationPolicy),
	}
	if diff := cmp.Diff(want, w); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}
