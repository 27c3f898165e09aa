package generic

import (
	"context"
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// widgetStrategy is a custom-resource-like strategy on unstructured
// objects: namespaced, generation from everything but metadata and status.
type widgetStrategy struct{ SpecGeneration }

func (widgetStrategy) NamespaceScoped() bool { return true }
func (widgetStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	must(ClearStatus(obj))
}
func (widgetStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	if _, ok := obj.(*unstructured.Unstructured).Object["spec"].(map[string]any); !ok {
		return field.ErrorList{field.Required(field.NewPath("spec"), "")}
	}
	return nil
}
func (widgetStrategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (widgetStrategy) Canonicalize(runtime.Object)                               {}
func (widgetStrategy) AllowCreateOnUpdate() bool                                 { return false }
func (widgetStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	must(CopyStatus(obj, old))
}
func (s widgetStrategy) ValidateUpdate(ctx context.Context, obj, _ runtime.Object) field.ErrorList {
	return s.Validate(ctx, obj)
}
func (widgetStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (widgetStrategy) AllowUnconditionalUpdate() bool { return false }

func TestUnstructured(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	newFunc := func() runtime.Object {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		return u
	}
	newList := func() runtime.Object {
		u := &unstructured.UnstructuredList{}
		u.SetGroupVersionKind(gvk.GroupVersion().WithKind("WidgetList"))
		return u
	}
	b := newBackend(t)
	s := completeStore(t, &Store{
		NewFunc:                  newFunc,
		NewListFunc:              newList,
		DefaultQualifiedResource: schema.GroupResource{Group: "example.com", Resource: "widgets"},
		CreateStrategy:           widgetStrategy{},
		UpdateStrategy:           widgetStrategy{},
		Storage:                  b.Store(memory.Config{Codec: unstructured.UnstructuredJSONScheme, NewFunc: newFunc, NewListFunc: newList}),
	})
	status := NewStatusREST(s, StatusStrategy{UpdateStrategy: s.UpdateStrategy, GroupVersions: []schema.GroupVersion{gvk.GroupVersion()}})
	ctx := nsCtx("ns")
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w"},
		"spec":     map[string]any{"size": int64(1)},
		"status":   map[string]any{"ready": true},
	}}
	got := mustCreate(t, s, ctx, w)
	if got.GetGeneration() != 1 || got.GetUID() == "" || got.Object["status"] != nil || s.KeyPrefix != "/example.com/widgets" {
		t.Fatalf("got %v (prefix %s), want generation 1, a uid, no status", got.Object, s.KeyPrefix)
	}
	bad := w.DeepCopy()
	bad.SetName("bad")
	delete(bad.Object, "spec")
	_, err := s.Create(ctx, bad, nil, &metav1.CreateOptions{})
	wantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, `Widget.example.com "bad" is invalid: spec: Required value`)

	out, _, err := s.Update(ctx, "w", modify(func(u *unstructured.Unstructured) {
		u.Object["spec"] = map[string]any{"size": int64(2)}
		u.Object["status"] = map[string]any{"ready": true}
	}), nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if u := out.(*unstructured.Unstructured); u.GetGeneration() != 2 || u.Object["status"] != nil {
		t.Errorf("got %v, want generation 2 and no status", u.Object)
	}
	out, _, err = status.Update(ctx, "w", modify(func(u *unstructured.Unstructured) {
		u.Object["spec"] = map[string]any{"size": int64(9)}
		u.Object["status"] = map[string]any{"ready": true}
	}), nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("status update: %v", err)
	}
	u := out.(*unstructured.Unstructured)
	if size, _, _ := unstructured.NestedInt64(u.Object, "spec", "size"); size != 2 || u.GetGeneration() != 2 {
		t.Errorf("got %v, want spec.size 2 and generation 2", u.Object)
	}
	if ready, _, _ := unstructured.NestedBool(u.Object, "status", "ready"); !ready {
		t.Errorf("got %v, want status.ready", u.Object)
	}
	list, err := s.List(ctx, nil)
	if err != nil || len(list.(*unstructured.UnstructuredList).Items) != 1 {
		t.Fatalf("list: %v", err)
	}
	if _, deleted, err := s.Delete(ctx, "w", nil, &metav1.DeleteOptions{}); err != nil || !deleted {
		t.Fatalf("delete: %v %v", deleted, err)
	}
	if _, err := s.Get(ctx, "w", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("got %v, want NotFound", err)
	}
}
