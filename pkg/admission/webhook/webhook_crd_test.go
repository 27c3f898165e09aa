package webhook_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/kapitest"
)

func widgetCRD(name string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name + "s.hooks.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "hooks.example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: name + "s", Kind: strings.ToUpper(name[:1]) + name[1:]},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}}}},
		},
	}
}

// TestWebhooksOnCustomResources: webhooks see custom resources (a
// mutation stored) and CRDs themselves (a denial), through the one chain
// the three servers share.
func TestWebhooksOnCustomResources(t *testing.T) {
	hooks := startHooks(t)
	s := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(s.Config)
	crds := apiextensionsclient.NewForConfigOrDie(s.Config)
	dyn := dynamic.NewForConfigOrDie(s.Config)
	ctx := context.Background()
	cc := func(path string) arv1.WebhookClientConfig {
		return arv1.WebhookClientConfig{URL: hooks.url(path), CABundle: hooks.caBundle}
	}
	if _, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &arv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "cr"},
		Webhooks: []arv1.MutatingWebhook{mutatingHook("widgets.kapi.test", cc("/label"), func(w *arv1.MutatingWebhook) {
			w.ObjectSelector = nil
			w.Rules = []arv1.RuleWithOperations{{Operations: []arv1.OperationType{arv1.Create},
				Rule: arv1.Rule{APIGroups: []string{"hooks.example.com"}, APIVersions: []string{"*"}, Resources: []string{"widgets"}}}}
		})},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &arv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "crd"},
		Webhooks: []arv1.ValidatingWebhook{validatingHook("crds.kapi.test", cc("/deny"), func(w *arv1.ValidatingWebhook) {
			w.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"deny": "true"}}
			w.Rules = []arv1.RuleWithOperations{{Operations: []arv1.OperationType{arv1.Create},
				Rule: arv1.Rule{APIGroups: []string{"apiextensions.k8s.io"}, APIVersions: []string{"v1"}, Resources: []string{"customresourcedefinitions"}}}}
		})},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var err error
	var denied *apiextensionsv1.CustomResourceDefinition
	attempt := 0
	eventually(t, "CRD webhook in effect", func() bool {
		attempt++
		denied = widgetCRD(fmt.Sprintf("gadget%d", attempt))
		denied.Labels = map[string]string{"deny": "true"}
		_, err = crds.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, denied, metav1.CreateOptions{})
		return err != nil
	})
	if want := `admission webhook "crds.kapi.test" denied the request: configmaps named ` + denied.Name + ` are not welcome`; !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("CRD create: %v, want %q", err, want)
	}

	if _, err := crds.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, widgetCRD("widget"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	widgets := dyn.Resource(schema.GroupVersionResource{Group: "hooks.example.com", Version: "v1", Resource: "widgets"}).Namespace("default")
	var got *unstructured.Unstructured
	eventually(t, "widgets served", func() bool {
		got, err = widgets.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "hooks.example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w1"}, "spec": map[string]any{"size": int64(1)},
		}}, metav1.CreateOptions{})
		return err == nil
	})
	stored, err := widgets.Get(ctx, "w1", metav1.GetOptions{})
	if err != nil || stored.GetLabels()["label"] != "0" || got.GetLabels()["label"] != "0" {
		t.Errorf("widget labels %v (%v), want label=0 added by the webhook", stored.GetLabels(), err)
	}
	if v, _, _ := unstructured.NestedInt64(stored.Object, "spec", "size"); v != 1 {
		t.Errorf("spec.size %d after the patch", v)
	}
}
