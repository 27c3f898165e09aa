package apiextensions

import (
	"context"
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

// fieldValidation on /status writes: unknown fields are a 400 under
// Strict, warnings under Warn (the default), silent under Ignore; they
// are pruned unless refused.
func TestStatusFieldValidation(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	crd := crdtest.NewCRD("example.com", "widgets", "Widget", apiextensionsv1.NamespaceScoped)
	if _, err := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ts.crdClient(t), crd.Name)
	var w warnings
	cfg := ts.config()
	cfg.WarningHandler = &w
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ri := dc.Resource(gvr("example.com", "v1", "widgets")).Namespace("ns1")
	eventually(t, waitTimeout, "widgets served", func() bool {
		_, err := ri.List(ctx, metav1.ListOptions{})
		return err == nil
	})
	if _, err := ri.Create(ctx, widget("example.com/v1", "Widget", "w", map[string]any{"name": "x"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		directive    string
		wantErr      string
		wantWarnings []string
	}{
		{metav1.FieldValidationStrict, `strict decoding error: unknown field "status.bogus"`, nil},
		{metav1.FieldValidationWarn, "", []string{`unknown field "status.bogus"`}},
		{"", "", []string{`unknown field "status.bogus"`}},
		{metav1.FieldValidationIgnore, "", nil},
	} {
		t.Run("directive "+tc.directive, func(t *testing.T) {
			w.mu.Lock()
			w.msgs = nil
			w.mu.Unlock()
			u, err := ri.Get(ctx, "w", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			u.Object["status"] = map[string]any{"ready": true, "bogus": "x"}
			out, err := ri.UpdateStatus(ctx, u, metav1.UpdateOptions{FieldValidation: tc.directive})
			if tc.wantErr != "" {
				if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want 400 %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, found, _ := unstructured.NestedFieldNoCopy(out.Object, "status", "bogus"); found {
				t.Fatalf("status.bogus kept: %v", out.Object["status"])
			}
			w.mu.Lock()
			got := w.msgs
			w.mu.Unlock()
			if !reflect.DeepEqual(got, tc.wantWarnings) {
				t.Fatalf("warnings: got %q, want %q", got, tc.wantWarnings)
			}
		})
	}
}
