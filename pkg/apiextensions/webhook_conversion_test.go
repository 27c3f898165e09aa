package apiextensions

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// convertingWebhook converts gizmos between v1 (spec.size) and v2
// (spec.replicas). When failing is set it answers every review with a
// Failure result.
type convertingWebhook struct {
	calls   atomic.Int64
	failing atomic.Bool
}

func (h *convertingWebhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.calls.Add(1)
	var review apiextensionsv1.ConversionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "bad review", http.StatusBadRequest)
		return
	}
	resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	if h.failing.Load() {
		resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: "gizmo converter is down"}
	} else {
		for _, raw := range review.Request.Objects {
			var obj map[string]any
			if err := json.Unmarshal(raw.Raw, &obj); err != nil {
				http.Error(w, "bad object", http.StatusBadRequest)
				return
			}
			spec, _ := obj["spec"].(map[string]any)
			switch review.Request.DesiredAPIVersion {
			case "webhook.example.com/v2":
				if v, ok := spec["size"]; ok {
					spec["replicas"] = v
					delete(spec, "size")
				}
			case "webhook.example.com/v1":
				if v, ok := spec["replicas"]; ok {
					spec["size"] = v
					delete(spec, "replicas")
				}
			}
			obj["apiVersion"] = review.Request.DesiredAPIVersion
			b, _ := json.Marshal(obj)
			resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: b})
		}
	}
	review.Response, review.Request = resp, nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

func gizmoCRD(url string, caBundle []byte) *apiextensionsv1.CustomResourceDefinition {
	schema := func(field string) *apiextensionsv1.CustomResourceValidation {
		return &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
			Type: "object",
			Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{field: {Type: "integer"}}},
			},
		}}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gizmos.webhook.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "webhook.example.com",
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gizmos", Kind: "Gizmo"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: schema("size")},
				{Name: "v2", Served: true, Schema: schema("replicas")},
			},
			Conversion: &apiextensionsv1.CustomResourceConversion{
				Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{
					ConversionReviewVersions: []string{"v1"},
					ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: ptr.To(url), CABundle: caBundle},
				},
			},
		},
	}
}

// A CRD with a Webhook conversion strategy: objects written in v2 are
// stored in v1 (converted by the webhook) and read back in either
// version; a failing webhook is a clear 500 naming the webhook.
func TestWebhookConversion(t *testing.T) {
	hook := &convertingWebhook{}
	webhook := httptest.NewTLSServer(hook)
	defer webhook.Close()
	caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: webhook.Certificate().Raw})

	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	crds := ts.crdClient(t)
	if _, err := crds.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, gizmoCRD(webhook.URL+"/convert", caBundle), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	waitEstablished(t, crds, "gizmos.webhook.example.com")
	dyn := ts.dynamic(t)
	v1 := dyn.Resource(gvr("webhook.example.com", "v1", "gizmos")).Namespace("default")
	v2 := dyn.Resource(gvr("webhook.example.com", "v2", "gizmos")).Namespace("default")

	var created *unstructured.Unstructured
	eventually(t, waitTimeout, "v2 served", func() bool {
		var err error
		created, err = v2.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "webhook.example.com/v2", "kind": "Gizmo",
			"metadata": map[string]any{"name": "g1"},
			"spec":     map[string]any{"replicas": int64(3)},
		}}, metav1.CreateOptions{})
		return err == nil
	})
	if got, _, _ := unstructured.NestedInt64(created.Object, "spec", "replicas"); got != 3 || created.GetAPIVersion() != "webhook.example.com/v2" {
		t.Errorf("create answered %v, want v2 with spec.replicas 3", created.Object)
	}
	// Each served version's routes are installed in turn: v1 may be
	// served a moment after v2.
	var got1 *unstructured.Unstructured
	eventually(t, waitTimeout, "v1 served", func() bool {
		var err error
		got1, err = v1.Get(ctx, "g1", metav1.GetOptions{})
		return err == nil
	})
	if size, _, _ := unstructured.NestedInt64(got1.Object, "spec", "size"); size != 3 {
		t.Errorf("v1 read %v, want spec.size 3 (converted by the webhook)", got1.Object["spec"])
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(got1.Object, "spec", "replicas"); found {
		t.Errorf("v1 read has spec.replicas: %v", got1.Object["spec"])
	}
	list, err := v2.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list v2: %v, %v", list, err)
	}
	if r, _, _ := unstructured.NestedInt64(list.Items[0].Object, "spec", "replicas"); r != 3 {
		t.Errorf("v2 list item %v, want spec.replicas 3", list.Items[0].Object["spec"])
	}
	if hook.calls.Load() == 0 {
		t.Error("the webhook was never called")
	}

	// An update in v1 by another manager: managedFields keeps both
	// managers, each in its own version (the field manager converts the
	// object through the webhook to compare them).
	if err := unstructured.SetNestedField(got1.Object, int64(4), "spec", "size"); err != nil {
		t.Fatal(err)
	}
	updated, err := v1.Update(ctx, got1, metav1.UpdateOptions{FieldManager: "v1-editor"})
	if err != nil {
		t.Fatalf("update v1: %v", err)
	}
	versions := map[string]string{}
	for _, e := range updated.GetManagedFields() {
		versions[e.Manager] = e.APIVersion
	}
	if versions["v1-editor"] != "webhook.example.com/v1" || len(versions) != 2 {
		t.Errorf("got managedFields managers %v, want the creator and v1-editor (webhook.example.com/v1)", versions)
	}

	// Reads in the storage version need no webhook; reads in v2 fail
	// clearly while it fails.
	hook.failing.Store(true)
	if _, err := v1.Get(ctx, "g1", metav1.GetOptions{}); err != nil {
		t.Errorf("v1 get with the webhook failing: %v (no conversion is needed)", err)
	}
	_, err = v2.Get(ctx, "g1", metav1.GetOptions{})
	// kube-apiserver v1.37.2 answers (recorded with a webhook answering
	// every review with this Failure, GET .../v2/namespaces/default/gizmos/g1
	// of an object stored in v1): 500 InternalError naming the storage's
	// corrupt-object error, the object's revision and the webhook's error.
	cause := fmt.Sprintf("StorageError: corrupt object, Code: 7, Key: /webhook.example.com/gizmos/default/g1, ResourceVersion: 0, "+
		"AdditionalErrorMsg: object not decodable revision=%s: conversion webhook for webhook.example.com/v1, Kind=Gizmo failed: gizmo converter is down",
		updated.GetResourceVersion())
	var status apierrors.APIStatus
	if !errorsAs(err, &status) {
		t.Fatalf("v2 get with the webhook failing: got %v, want a 500 status", err)
	}
	st := status.Status()
	if st.Code != http.StatusInternalServerError || st.Reason != metav1.StatusReasonInternalError || st.Message != "Internal error occurred: "+cause ||
		st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Message != cause {
		t.Errorf("v2 get with the webhook failing: got %+v, want 500 InternalError with message and cause %q", st, cause)
	}

	// A list meets the same object: kube-apiserver v1.37.2 answers (same
	// recording, GET .../v2/namespaces/default/gizmos?limit=1, read from
	// etcd) 500 StorageReadError naming each corrupt object by its storage
	// key (etcd's, under --etcd-prefix; this memory backend has none).
	_, err = v2.List(ctx, metav1.ListOptions{Limit: 1})
	listCause := cause
	wantList := metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Reason: metav1.StatusReasonStoreReadError,
		Message: "failed to read one or more gizmos.webhook.example.com from the storage: " + listCause,
		Details: &metav1.StatusDetails{Group: "webhook.example.com", Kind: "gizmos", Name: "list", Causes: []metav1.StatusCause{{
			Type: metav1.CauseTypeUnexpectedServerResponse, Field: "/webhook.example.com/gizmos/default/g1", Message: listCause}}}}
	if !errorsAs(err, &status) {
		t.Fatalf("v2 list with the webhook failing: got %v, want a 500 status", err)
	}
	if got := status.Status(); fmt.Sprint(got.Code, got.Reason, got.Message, *got.Details) != fmt.Sprint(wantList.Code, wantList.Reason, wantList.Message, *wantList.Details) {
		t.Errorf("v2 list with the webhook failing:\ngot  %+v\nwant %+v", got, wantList)
	}

	// kube-apiserver v1.37.2 (AllowUnsafeMalformedObjectDeletion, beta,
	// on) deletes such an object with ignoreStoreReadErrorWithClusterBreakingPotential,
	// only if it cannot be read (recorded on the reference with the same
	// webhook): a dry run deletes nothing; through v1, which reads it,
	// 409 Conflict naming the storage key (etcd's, with the prefix, there);
	// a collection delete 422; then the delete.
	unsafe := metav1.DeleteOptions{IgnoreStoreReadErrorWithClusterBreakingPotential: ptr.To(true)}
	dry := unsafe
	dry.DryRun = []string{metav1.DryRunAll}
	if err := v2.Delete(ctx, "g1", dry); err != nil {
		t.Fatalf("unsafe dry-run delete: %v", err)
	}
	if _, err := v1.Get(ctx, "g1", metav1.GetOptions{}); err != nil {
		t.Fatalf("after an unsafe dry-run delete: %v", err)
	}
	err = v1.Delete(ctx, "g1", unsafe)
	wantConflict := `Operation cannot be fulfilled on gizmos.webhook.example.com "g1": StorageError: invalid object, Code: 4, Key: /webhook.example.com/gizmos/default/g1, ` +
		"ResourceVersion: 0, AdditionalErrorMsg: unsafe deletion is not allowed because the object is decodable from storage"
	if !apierrors.IsConflict(err) || err.Error() != wantConflict {
		t.Errorf("unsafe delete of a readable object: got %v, want 409 %q", err, wantConflict)
	}
	err = v2.DeleteCollection(ctx, unsafe, metav1.ListOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is not allowed with DELETECOLLECTION") {
		t.Errorf("unsafe collection delete: got %v, want 422", err)
	}
	if err := v2.Delete(ctx, "g1", unsafe); err != nil {
		t.Fatalf("unsafe delete: %v", err)
	}
	if _, err := v1.Get(ctx, "g1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after the unsafe delete: got %v, want 404", err)
	}
	if err := v2.Delete(ctx, "g1", unsafe); !apierrors.IsNotFound(err) {
		t.Errorf("unsafe delete of a deleted object: got %v, want 404", err)
	}
}

func errorsAs(err error, target *apierrors.APIStatus) bool {
	if err == nil {
		return false
	}
	s, ok := err.(apierrors.APIStatus)
	if ok {
		*target = s
	}
	return ok
}

// Storage version migration as a cluster operator does it: the storage
// version moves from v1 to v2 (storedVersions becomes [v1 v2]), every
// object is rewritten (a no-op update stores it in v2), then v1 is removed
// from status.storedVersions. Where an object is stored is observed
// through the webhook: a v2 read of a v1-stored object calls it, a v2
// read of a v2-stored one does not.
func TestStorageVersionMigration(t *testing.T) {
	hook := &convertingWebhook{}
	webhook := httptest.NewTLSServer(hook)
	defer webhook.Close()
	caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: webhook.Certificate().Raw})

	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	crds := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx, gizmoCRD(webhook.URL+"/convert", caBundle), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	waitEstablished(t, ts.crdClient(t), "gizmos.webhook.example.com")
	dyn := ts.dynamic(t)
	v1 := dyn.Resource(gvr("webhook.example.com", "v1", "gizmos")).Namespace("default")
	v2 := dyn.Resource(gvr("webhook.example.com", "v2", "gizmos")).Namespace("default")
	eventually(t, waitTimeout, "v1 served", func() bool {
		_, err := v1.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "webhook.example.com/v1", "kind": "Gizmo",
			"metadata": map[string]any{"name": "old"},
			"spec":     map[string]any{"size": int64(2)},
		}}, metav1.CreateOptions{})
		return err == nil
	})

	// v2 becomes the storage version.
	crd, err := crds.Get(ctx, "gizmos.webhook.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crd.Spec.Versions[0].Storage, crd.Spec.Versions[1].Storage = false, true
	if _, err := crds.Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("switch the storage version: %v", err)
	}
	eventually(t, waitTimeout, "storedVersions [v1 v2]", func() bool {
		c, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		return err == nil && strings.Join(c.Status.StoredVersions, ",") == "v1,v2"
	})

	v2Read := func() int64 {
		t.Helper()
		before := hook.calls.Load()
		var u *unstructured.Unstructured
		eventually(t, waitTimeout, "v2 read", func() bool {
			var err error
			u, err = v2.Get(ctx, "old", metav1.GetOptions{})
			return err == nil
		})
		if r, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); r != 2 {
			t.Fatalf("v2 read: got spec %v, want replicas 2", u.Object["spec"])
		}
		return hook.calls.Load() - before
	}
	if calls := v2Read(); calls == 0 {
		t.Fatal("a v2 read of an object stored in v1 made no webhook call")
	}

	// The migration: read and write back every object (as
	// kube-storage-version-migrator does); it is then stored in v2. The
	// new storage version takes effect when the controller has served the
	// updated CRD, which may be just after storedVersions changed: repeat
	// until a rewrite lands in v2.
	eventually(t, waitTimeout, "objects rewritten in v2", func() bool {
		list, err := v2.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for i := range list.Items {
			if _, err := v2.Update(ctx, &list.Items[i], metav1.UpdateOptions{}); err != nil {
				t.Logf("rewrite %s: %v", list.Items[i].GetName(), err)
				return false
			}
		}
		return v2Read() == 0
	})

	// v1 may now leave storedVersions (through /status, whose validation
	// is the accepted names only, as upstream).
	crd, err = crds.Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crd.Status.StoredVersions = []string{"v2"}
	updated, err := crds.UpdateStatus(ctx, crd, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("remove v1 from storedVersions: %v", err)
	}
	if got := strings.Join(updated.Status.StoredVersions, ","); got != "v2" {
		t.Errorf("got storedVersions %s, want v2", got)
	}
}
