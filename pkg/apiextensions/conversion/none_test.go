package conversion

import (
	"context"
	"errors"
	"net/http"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestNoneConvertObject(t *testing.T) {
	c, err := New(noneCRD(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tests := []struct {
		name    string
		in      *unstructured.Unstructured
		to      schema.GroupVersion
		wantErr string
	}{
		{name: "v1 to v2", in: cronTab(gvV1, "a"), to: gvV2},
		{name: "v2 to v1", in: cronTab(gvV2, "a"), to: gvV1},
		{name: "same version", in: cronTab(gvV1, "a"), to: gvV1},
		{name: "unknown target", in: cronTab(gvV1, "a"), to: schema.GroupVersion{Group: group, Version: "v3"},
			wantErr: "request to convert CR to an invalid group/version: stable.example.com/v3"},
		{name: "unknown source", in: cronTab(schema.GroupVersion{Group: "other.io", Version: "v1"}, "a"), to: gvV2,
			wantErr: "request to convert CR from an invalid group/version: other.io/v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.in.DeepCopy()
			got, err := c.ConvertObject(ctx, tt.in, tt.to)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.GetAPIVersion() != tt.to.String() {
				t.Errorf("got apiVersion %q, want %q", got.GetAPIVersion(), tt.to)
			}
			if got.GetKind() != "CronTab" || got.GetName() != "a" {
				t.Errorf("got kind %q name %q, want CronTab a", got.GetKind(), got.GetName())
			}
			if tt.in.GetAPIVersion() == tt.to.String() && got != tt.in {
				t.Errorf("object already in %v: got a new object, want the input itself", tt.to)
			}
			if !equalObjects(tt.in, before) {
				t.Errorf("input was mutated: got %v, want %v", tt.in.Object, before.Object)
			}
		})
	}
}

func TestNoneConvertList(t *testing.T) {
	c, err := New(noneCRD(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": gvV1.String(), "kind": "CronTabList", "metadata": map[string]any{"resourceVersion": "9"}}}
	list.Items = []unstructured.Unstructured{*cronTab(gvV1, "a"), *cronTab(gvV2, "b")}
	got, err := c.ConvertList(context.Background(), list, gvV2)
	if err != nil {
		t.Fatal(err)
	}
	if got.GetAPIVersion() != gvV2.String() || got.GetResourceVersion() != "9" {
		t.Errorf("got list apiVersion %q resourceVersion %q, want %q 9", got.GetAPIVersion(), got.GetResourceVersion(), gvV2)
	}
	for i, it := range got.Items {
		if it.GetAPIVersion() != gvV2.String() {
			t.Errorf("item %d: got apiVersion %q, want %q", i, it.GetAPIVersion(), gvV2)
		}
	}
	if list.GetAPIVersion() != gvV1.String() || list.Items[0].GetAPIVersion() != gvV1.String() {
		t.Errorf("input list was mutated")
	}

	_, err = c.Convert(context.Background(), []*unstructured.Unstructured{cronTab(gvV1, "a"), cronTab(schema.GroupVersion{Group: group, Version: "v9"}, "b")}, gvV2)
	if want := "request to convert CR list failed, list index 1 has invalid group/version: stable.example.com/v9"; err == nil || err.Error() != want {
		t.Errorf("got error %v, want %q", err, want)
	}
}

func TestNewStrategies(t *testing.T) {
	unset := noneCRD()
	unset.Spec.Conversion = nil
	unknown := noneCRD()
	unknown.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: "Magic"}
	noWebhook := noneCRD()
	noWebhook.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter}
	httpURL := "http://hook.example.com/convert"
	u := "https://hook.example.com/convert"
	tests := []struct {
		name    string
		crd     *apiextensionsv1.CustomResourceDefinition
		opts    Options
		wantErr string
	}{
		{name: "conversion unset is None", crd: unset},
		{name: "unknown strategy", crd: unknown, wantErr: `unknown conversion strategy "Magic" for CRD crontabs.stable.example.com`},
		{name: "webhook without config", crd: noWebhook, wantErr: "without spec.conversion.webhook"},
		{name: "no url nor service", crd: webhookCRD(apiextensionsv1.WebhookClientConfig{}), wantErr: "webhook configuration must have either service or URL"},
		{name: "both url and service", crd: webhookCRD(apiextensionsv1.WebhookClientConfig{URL: &u, Service: &apiextensionsv1.ServiceReference{Namespace: "ns", Name: "s"}}), opts: Options{ServiceResolver: staticResolver{}}, wantErr: "not both"},
		{name: "http url", crd: webhookCRD(apiextensionsv1.WebhookClientConfig{URL: &httpURL}), wantErr: "'https' is the only allowed URL scheme"},
		{name: "url with query", crd: webhookCRD(apiextensionsv1.WebhookClientConfig{URL: ptrString(u + "?a=b")}), wantErr: "query parameters are not permitted"},
		{name: "service without resolver", crd: webhookCRD(apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{Namespace: "ns", Name: "s"}}), wantErr: "no ServiceResolver"},
		{name: "caBundle not PEM", crd: webhookCRD(apiextensionsv1.WebhookClientConfig{URL: &u, CABundle: []byte("not a certificate")}), wantErr: "unable to load root certificates"},
		{name: "whitespace caBundle is empty", crd: webhookCRD(apiextensionsv1.WebhookClientConfig{URL: &u, CABundle: []byte(" \n")})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.crd, tt.opts)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("got error %v, want none", err)
			case tt.wantErr != "" && (err == nil || !contains(err.Error(), tt.wantErr)):
				t.Fatalf("got error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestErrorStatus(t *testing.T) {
	c, err := New(noneCRD(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ConvertObject(context.Background(), cronTab(gvV1, "a"), schema.GroupVersion{Group: group, Version: "v3"})
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("got error %T, want *Error", err)
	}
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		t.Fatalf("got error %T, want an apierrors.APIStatus", err)
	}
	s := st.Status()
	if s.Code != http.StatusInternalServerError || s.Reason != "" || s.Status != "Failure" || s.Message != err.Error() {
		t.Errorf("got status code %d reason %q status %q message %q, want 500, no reason, Failure, %q", s.Code, s.Reason, s.Status, s.Message, err.Error())
	}
}
