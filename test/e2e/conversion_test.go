package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
	"github.com/kapi-dev/kapi/pkg/auth/pki"
)

// TestConversionWebhookBehindService runs a CRD whose conversion webhook
// is referenced as a Service (clientConfig.service), as operators deploy
// them: the Service is of type ExternalName pointing at localhost, so kapi
// sends the review to localhost:<the reference's port>, verifies the
// webhook's certificate for <service>.<namespace>.svc against the
// caBundle, and converts between v1 (spec.size) and v2 (spec.replicas).
// The CRD's group-version also gets its local APIService, which goes with
// the CRD.
func TestConversionWebhookBehindService(t *testing.T) {
	srv := kapitest.Start(t)
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	dyn := dynamic.NewForConfigOrDie(srv.Config)
	ext := apiextensionsclient.NewForConfigOrDie(srv.Config)

	// The webhook: a certificate for convert.default.svc from a CA of
	// its own, listening on 127.0.0.1.
	bundle, err := pki.Ensure(pki.Config{Dir: filepath.Join(t.TempDir(), "pki"), Hosts: []string{"convert.default.svc"}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{bundle.Serving}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	hook := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		convertWidgetReview(w, r)
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = hook.Serve(ln) }()
	defer hook.Close()
	port := ln.Addr().(*net.TCPAddr).Port

	makeExternalService(t, cs, "convert")

	schemaWith := func(field string) *apiextensionsv1.CustomResourceValidation {
		return &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
			Type: "object",
			Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{field: {Type: "integer"}}},
			},
		}}
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "convertibles.conv.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "conv.example.com",
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "convertibles", Kind: "Convertible"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: schemaWith("size")},
				{Name: "v2", Served: true, Schema: schemaWith("replicas")},
			},
			Conversion: &apiextensionsv1.CustomResourceConversion{
				Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{
					ConversionReviewVersions: []string{"v1"},
					ClientConfig: &apiextensionsv1.WebhookClientConfig{
						Service:  &apiextensionsv1.ServiceReference{Namespace: "default", Name: "convert", Path: ptrTo("/convert"), Port: ptrTo(int32(port))},
						CABundle: bundle.CAPEM,
					},
				},
			},
		},
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	v1 := dyn.Resource(schema.GroupVersionResource{Group: "conv.example.com", Version: "v1", Resource: "convertibles"}).Namespace("default")
	v2 := dyn.Resource(schema.GroupVersionResource{Group: "conv.example.com", Version: "v2", Resource: "convertibles"}).Namespace("default")
	eventually(t, time.Minute, "create through v2", func() error {
		_, err := v2.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "conv.example.com/v2", "kind": "Convertible",
			"metadata": map[string]any{"name": "c1"},
			"spec":     map[string]any{"replicas": int64(7)},
		}}, metav1.CreateOptions{})
		return err
	})
	// Each served version's routes are installed in turn: v1 may be
	// served a moment after v2.
	var got *unstructured.Unstructured
	eventually(t, time.Minute, "read through v1", func() error {
		var err error
		got, err = v1.Get(ctx, "c1", metav1.GetOptions{})
		return err
	})
	if size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size"); size != 7 {
		t.Errorf("v1 read: got spec %v, want size 7 (converted by the webhook)", got.Object["spec"])
	}
	if calls.Load() == 0 {
		t.Error("the webhook behind the Service was never called")
	}

	// The CRD's local APIService, managed continuously: it goes with the
	// CRD.
	apiservices := dyn.Resource(apiServiceGVR)
	eventually(t, time.Minute, "APIService v1.conv.example.com", func() error {
		u, err := apiservices.Get(ctx, "v2.conv.example.com", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := u.GetLabels()["kube-aggregator.kubernetes.io/automanaged"]; got != "true" {
			return fmt.Errorf("automanaged label %q, want true", got)
		}
		return nil
	})
	if err := ext.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, crd.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "APIService v2.conv.example.com gone with its CRD", func() error {
		_, err := apiservices.Get(ctx, "v2.conv.example.com", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("got %v, want NotFound", err)
	})
}

// convertWidgetReview answers a ConversionReview v1: spec.size (v1) <->
// spec.replicas (v2).
func convertWidgetReview(w http.ResponseWriter, r *http.Request) {
	var review apiextensionsv1.ConversionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "bad review", http.StatusBadRequest)
		return
	}
	resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	for _, raw := range review.Request.Objects {
		var obj map[string]any
		if err := json.Unmarshal(raw.Raw, &obj); err != nil {
			http.Error(w, "bad object", http.StatusBadRequest)
			return
		}
		spec, _ := obj["spec"].(map[string]any)
		from, to := "replicas", "size"
		if review.Request.DesiredAPIVersion == "conv.example.com/v2" {
			from, to = "size", "replicas"
		}
		if v, ok := spec[from]; ok {
			spec[to] = v
			delete(spec, from)
		}
		obj["apiVersion"] = review.Request.DesiredAPIVersion
		b, _ := json.Marshal(obj)
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: b})
	}
	review.Response, review.Request = resp, nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}
