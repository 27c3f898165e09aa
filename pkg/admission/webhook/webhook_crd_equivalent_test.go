package webhook_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/kapitest"
)

// startConverter serves a CRD conversion webhook between gizmos v1
// (spec.size) and v2 (spec.count), counting its calls.
func startConverter(t *testing.T) (*httptest.Server, []byte, *atomic.Int64) {
	cert, ca := newCert(t)
	var calls atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		body, _ := io.ReadAll(r.Body)
		var review apiextensionsv1.ConversionReview
		if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
		for _, raw := range review.Request.Objects {
			var u map[string]any
			_ = json.Unmarshal(raw.Raw, &u)
			spec, _ := u["spec"].(map[string]any)
			if spec == nil {
				spec = map[string]any{}
			}
			from, to := "size", "count"
			if review.Request.DesiredAPIVersion == "hooks.example.com/v1" {
				from, to = "count", "size"
			}
			if v, ok := spec[from]; ok {
				spec[to] = v
				delete(spec, from)
			}
			u["spec"] = spec
			u["apiVersion"] = review.Request.DesiredAPIVersion
			b, _ := json.Marshal(u)
			resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: b})
		}
		review.Response, review.Request = resp, nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&review)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, ca, &calls
}

// TestMatchPolicyEquivalentCustomResources: a webhook and a
// ValidatingAdmissionPolicy written for v1 of a CRD (matchPolicy
// Equivalent, the default) see a v2 request converted to v1 by the
// CRD's conversion webhook (kind and resource v1, requestKind and
// requestResource v2, as upstream's VersionedAttributes); the mutation
// lands in the stored object; an Exact webhook is not called.
func TestMatchPolicyEquivalentCustomResources(t *testing.T) {
	hooks := startHooks(t)
	conv, convCA, convCalls := startConverter(t)
	s := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(s.Config)
	dyn := dynamic.NewForConfigOrDie(s.Config)
	ctx := context.Background()
	schemaOf := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gizmos.hooks.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "hooks.example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gizmos", Kind: "Gizmo"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: schemaOf},
				{Name: "v2", Served: true, Schema: schemaOf},
			},
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter, Webhook: &apiextensionsv1.WebhookConversion{
				ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: ptr.To(conv.URL), CABundle: convCA},
				ConversionReviewVersions: []string{"v1"},
			}},
		},
	}
	if _, err := apiextensionsclient.NewForConfigOrDie(s.Config).ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	v1Rule := []arv1.RuleWithOperations{{Operations: []arv1.OperationType{arv1.Create},
		Rule: arv1.Rule{APIGroups: []string{"hooks.example.com"}, APIVersions: []string{"v1"}, Resources: []string{"gizmos"}}}}
	cc := func(path string) arv1.WebhookClientConfig {
		return arv1.WebhookClientConfig{URL: hooks.url(path), CABundle: hooks.caBundle}
	}
	if _, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &arv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "gizmos"},
		Webhooks: []arv1.MutatingWebhook{
			mutatingHook("equivalent.kapi.test", cc("/label"), func(w *arv1.MutatingWebhook) { w.ObjectSelector, w.Rules = nil, v1Rule }),
			mutatingHook("exact.kapi.test", cc("/exact"), func(w *arv1.MutatingWebhook) {
				w.ObjectSelector, w.Rules, w.MatchPolicy = nil, v1Rule, ptr.To(arv1.Exact)
			}),
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ar := cs.AdmissionregistrationV1()
	if _, err := ar.ValidatingAdmissionPolicies().Create(ctx, &arv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "gizmo-size"},
		Spec: arv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &arv1.MatchResources{ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: v1Rule[0]}}},
			Validations: []arv1.Validation{{
				Expression:        "object.apiVersion == 'hooks.example.com/v1' && object.spec.size < 10",
				MessageExpression: "'size ' + string(object.spec.size) + ' as ' + request.kind.version + '/' + request.resource.version + ' for a ' + request.requestKind.version + '/' + request.requestResource.version + ' request'",
			}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ar.ValidatingAdmissionPolicyBindings().Create(ctx, &arv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "gizmo-size"},
		Spec:       arv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "gizmo-size", ValidationActions: []arv1.ValidationAction{arv1.Deny}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	gizmo := func(name string, count int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "hooks.example.com/v2", "kind": "Gizmo", "metadata": map[string]any{"name": name}, "spec": map[string]any{"count": count},
		}}
	}
	v2 := dyn.Resource(schema.GroupVersionResource{Group: "hooks.example.com", Version: "v2", Resource: "gizmos"}).Namespace("default")
	// In effect once the policy denies a big v2 gizmo (seen as v1).
	var err error
	attempt := 0
	eventually(t, "CRD served, webhook and policy in effect", func() bool {
		attempt++
		_, err = v2.Create(ctx, gizmo(fmt.Sprintf("big%d", attempt), 20), metav1.CreateOptions{})
		return err != nil && strings.Contains(err.Error(), "ValidatingAdmissionPolicy") && hooks.count("/label") > 0
	})
	want := fmt.Sprintf(`gizmos.hooks.example.com "big%d" is forbidden: ValidatingAdmissionPolicy 'gizmo-size' with binding 'gizmo-size' denied request: size 20 as v1/v1 for a v2/v2 request`, attempt)
	if err.Error() != want || !apierrors.IsInvalid(err) {
		t.Errorf("big gizmo: %v, want 422 %q", err, want)
	}
	n := convCalls.Load()
	got, err := v2.Create(ctx, gizmo("small", 3), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if convCalls.Load() == n {
		t.Errorf("the CRD's conversion webhook was not called")
	}
	hooks.mu.Lock()
	req := hooks.requests["/label"]
	hooks.mu.Unlock()
	if req.Kind.Version != "v1" || req.Resource.Version != "v1" || req.RequestKind == nil || req.RequestKind.Version != "v2" || req.RequestResource.Version != "v2" {
		t.Errorf("review kind %v resource %v requestKind %v requestResource %v, want v1 sent for a v2 request", req.Kind, req.Resource, req.RequestKind, req.RequestResource)
	}
	var sent map[string]any
	_ = json.Unmarshal(req.Object.Raw, &sent)
	if size, _, _ := unstructured.NestedFieldNoCopy(sent, "spec", "size"); sent["apiVersion"] != "hooks.example.com/v1" || size != float64(3) {
		t.Errorf("object sent %v, want the v1 form (spec.size 3)", sent)
	}
	stored, err := v2.Get(ctx, "small", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if count, _, _ := unstructured.NestedInt64(stored.Object, "spec", "count"); stored.GetLabels()["label"] != "0" || got.GetLabels()["label"] != "0" || count != 3 {
		t.Errorf("stored %v, want the webhook's label and spec.count 3", stored.Object)
	}
	if n := hooks.count("/exact"); n != 0 {
		t.Errorf("the Exact webhook was called %d times for v2 requests", n)
	}
}
