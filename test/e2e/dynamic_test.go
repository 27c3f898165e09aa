package e2e

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

func TestDynamicClient(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		dc, err := dynamic.NewForConfig(e.config())
		if err != nil {
			t.Fatal(err)
		}
		res := dc.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
		w, err := res.Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()

		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1",
			"kind":       "ConfigMap",
			"metadata":   map[string]any{"name": "d", "labels": map[string]any{"via": "dynamic"}},
			"data":       map[string]any{"k": "v"},
		}}
		created, err := res.Create(ctx, obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if created.GetUID() == "" || created.GetNamespace() != ns || created.GetKind() != "ConfigMap" {
			t.Errorf("created %v, want uid, namespace %s and kind ConfigMap", created.Object, ns)
		}
		expectEvent(t, w, watch.Added, "d")

		got, err := res.Get(ctx, "d", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if v, _, _ := unstructured.NestedString(got.Object, "data", "k"); v != "v" {
			t.Errorf("get: data.k = %q, want v", v)
		}

		if err := unstructured.SetNestedField(got.Object, "v2", "data", "k"); err != nil {
			t.Fatal(err)
		}
		updated, err := res.Update(ctx, got, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		if v, _, _ := unstructured.NestedString(updated.Object, "data", "k"); v != "v2" {
			t.Errorf("update: data.k = %q, want v2", v)
		}
		expectEvent(t, w, watch.Modified, "d")
		if _, err := res.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			t.Errorf("stale update: got %v, want Conflict", err)
		}

		patched, err := res.Patch(ctx, "d", types.MergePatchType, []byte(`{"data":{"p":"1"}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("patch: %v", err)
		}
		if v, _, _ := unstructured.NestedString(patched.Object, "data", "p"); v != "1" {
			t.Errorf("patch: data.p = %q, want 1", v)
		}
		expectEvent(t, w, watch.Modified, "d")

		list, err := res.List(ctx, metav1.ListOptions{LabelSelector: "via=dynamic"})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		if len(list.Items) != 1 || list.Items[0].GetName() != "d" || list.GetResourceVersion() == "" || list.GetKind() != "ConfigMapList" {
			t.Errorf("list: got %s with %d items, rv %q; want ConfigMapList [d] with a resourceVersion", list.GetKind(), len(list.Items), list.GetResourceVersion())
		}

		// Unknown fields are dropped by default and refused with
		// fieldValidation=Strict.
		bad := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "extra"},
			"bogus":    "x",
		}}
		made, err := res.Create(ctx, bad, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create with an unknown field: %v", err)
		}
		if _, ok := made.Object["bogus"]; ok {
			t.Errorf("unknown field kept: %v", made.Object)
		}
		expectEvent(t, w, watch.Added, "extra")
		if _, err := res.Create(ctx, bad, metav1.CreateOptions{FieldValidation: "Strict"}); !apierrors.IsBadRequest(err) {
			t.Errorf("strict create with an unknown field: got %v, want BadRequest", err)
		}

		if err := res.Delete(ctx, "d", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		expectEvent(t, w, watch.Deleted, "d")
		if err := res.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Fatalf("deletecollection: %v", err)
		}
		expectEvent(t, w, watch.Deleted, "extra")
		if _, err := res.Get(ctx, "d", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get after delete: got %v, want NotFound", err)
		}
	})
}
