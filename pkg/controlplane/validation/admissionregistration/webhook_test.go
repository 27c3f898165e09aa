package admissionregistration

import (
	"strings"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func validHook() arv1.ValidatingWebhook {
	return arv1.ValidatingWebhook{
		Name:                    "check.example.com",
		ClientConfig:            arv1.WebhookClientConfig{URL: ptr.To("https://example.com/check")},
		Rules:                   []arv1.RuleWithOperations{{Operations: []arv1.OperationType{arv1.Create}, Rule: arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}},
		SideEffects:             ptr.To(arv1.SideEffectClassNone),
		AdmissionReviewVersions: []string{"v1"},
	}
}

// TestValidateWebhookConfiguration: expected field paths and messages are
// upstream's (kubernetes/kubernetes
// pkg/apis/admissionregistration/validation/validation.go and
// k8s.io/apiserver pkg/util/webhook/validation.go, v1.37), as
// field.Error.Error() renders them.
func TestValidateWebhookConfiguration(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*arv1.ValidatingWebhook)
		want   string
	}{
		{"valid", func(*arv1.ValidatingWebhook) {}, ""},
		{"name not qualified", func(w *arv1.ValidatingWebhook) { w.Name = "check" }, `webhooks[0].name: Invalid value: "check": should be a domain with at least three segments separated by dots`},
		{"no name", func(w *arv1.ValidatingWebhook) { w.Name = "" }, `webhooks[0].name: Required value`},
		{"no client config", func(w *arv1.ValidatingWebhook) { w.ClientConfig.URL = nil }, `webhooks[0].clientConfig: Required value: exactly one of url or service is required`},
		{"http url", func(w *arv1.ValidatingWebhook) { w.ClientConfig.URL = ptr.To("http://example.com") }, `webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`},
		{"url with query", func(w *arv1.ValidatingWebhook) { w.ClientConfig.URL = ptr.To("https://example.com/?a=b") }, `webhooks[0].clientConfig.url: Invalid value: "a=b": query parameters are not permitted in the URL`},
		{"service without namespace", func(w *arv1.ValidatingWebhook) {
			w.ClientConfig = arv1.WebhookClientConfig{Service: &arv1.ServiceReference{Name: "svc"}}
		}, `webhooks[0].clientConfig.service.namespace: Required value: service namespace is required`},
		{"service path", func(w *arv1.ValidatingWebhook) {
			w.ClientConfig = arv1.WebhookClientConfig{Service: &arv1.ServiceReference{Name: "svc", Namespace: "ns", Path: ptr.To("check")}}
		}, `webhooks[0].clientConfig.service.path: Invalid value: "check": must start with a '/'`},
		{"no side effects", func(w *arv1.ValidatingWebhook) { w.SideEffects = nil }, `webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun`},
		{"side effects Some", func(w *arv1.ValidatingWebhook) { w.SideEffects = ptr.To(arv1.SideEffectClassSome) }, `webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"`},
		{"no review versions", func(w *arv1.ValidatingWebhook) { w.AdmissionReviewVersions = nil }, `webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1`},
		{"unknown review version", func(w *arv1.ValidatingWebhook) { w.AdmissionReviewVersions = []string{"v2"} }, `webhooks[0].admissionReviewVersions: Invalid value: ["v2"]: must include at least one of v1, v1beta1`},
		{"timeout", func(w *arv1.ValidatingWebhook) { w.TimeoutSeconds = ptr.To[int32](31) }, `webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds`},
		{"failure policy", func(w *arv1.ValidatingWebhook) { w.FailurePolicy = ptr.To(arv1.FailurePolicyType("Maybe")) }, `webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"`},
		{"no operations", func(w *arv1.ValidatingWebhook) { w.Rules[0].Operations = nil }, `webhooks[0].rules[0].operations: Required value`},
		{"wildcard and operation", func(w *arv1.ValidatingWebhook) { w.Rules[0].Operations = []arv1.OperationType{"*", "CREATE"} }, `webhooks[0].rules[0].operations: Invalid value: ["*","CREATE"]: if '*' is present, must not specify other operations`},
		{"no resources", func(w *arv1.ValidatingWebhook) { w.Rules[0].Resources = nil }, `webhooks[0].rules[0].resources: Required value`},
		{"*/* and more", func(w *arv1.ValidatingWebhook) { w.Rules[0].Resources = []string{"*/*", "pods"} }, `webhooks[0].rules[0].resources: Invalid value: ["*/*","pods"]: if '*/*' is present, must not specify other resources`},
		{"scope", func(w *arv1.ValidatingWebhook) { w.Rules[0].Scope = ptr.To(arv1.ScopeType("Galaxy")) }, `webhooks[0].rules[0].scope: Unsupported value: "Galaxy": supported values: "*", "Cluster", "Namespaced"`},
		{"selector", func(w *arv1.ValidatingWebhook) {
			w.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}
		}, `webhooks[0].namespaceSelector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator`},
		{"match condition does not compile", func(w *arv1.ValidatingWebhook) {
			w.MatchConditions = []arv1.MatchCondition{{Name: "c", Expression: "object.metadata.name =="}}
		}, `webhooks[0].matchConditions[0].expression: Invalid value: "object.metadata.name ==": compilation failed: `},
		{"match condition not bool", func(w *arv1.ValidatingWebhook) {
			w.MatchConditions = []arv1.MatchCondition{{Name: "c", Expression: "'x'"}}
		}, `webhooks[0].matchConditions[0].expression: Invalid value: "'x'": compilation failed: must evaluate to bool`},
	} {
		w := validHook()
		tc.mutate(&w)
		errs := ValidateValidatingWebhookConfiguration(&arv1.ValidatingWebhookConfiguration{Webhooks: []arv1.ValidatingWebhook{w}})
		got := errs.ToAggregate()
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s: %v", tc.name, got)
		case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
			t.Errorf("%s: got %v\nwant %s", tc.name, got, tc.want)
		}
	}
	// Duplicate names.
	w := validHook()
	errs := ValidateMutatingWebhookConfiguration(&arv1.MutatingWebhookConfiguration{Webhooks: []arv1.MutatingWebhook{
		{Name: w.Name, ClientConfig: w.ClientConfig, SideEffects: w.SideEffects, AdmissionReviewVersions: w.AdmissionReviewVersions},
		{Name: w.Name, ClientConfig: w.ClientConfig, SideEffects: w.SideEffects, AdmissionReviewVersions: w.AdmissionReviewVersions},
	}})
	if got := errs.ToAggregate(); got == nil || !strings.Contains(got.Error(), `webhooks[1].name: Duplicate value: "check.example.com"`) {
		t.Errorf("duplicate names: %v", got)
	}
	// An update may keep what the old object already broke.
	old := &arv1.ValidatingWebhookConfiguration{Webhooks: []arv1.ValidatingWebhook{validHook()}}
	old.Webhooks[0].SideEffects = ptr.To(arv1.SideEffectClassUnknown)
	upd := old.DeepCopy()
	upd.Webhooks[0].TimeoutSeconds = ptr.To[int32](5)
	if errs := ValidateValidatingWebhookConfigurationUpdate(upd, old); len(errs) != 0 {
		t.Errorf("update keeping sideEffects Unknown: %v", errs)
	}
}
