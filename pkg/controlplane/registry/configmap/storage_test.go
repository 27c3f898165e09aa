package configmap

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func TestConfigMapStore(t *testing.T) {
	store, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("", "v1", "configmaps", "default")

	if got, want := store.ShortNames(), []string{"cm"}; !slices.Equal(got, want) {
		t.Errorf("got short names %v, want %v", got, want)
	}
	if got := store.GetSingularName(); got != "configmap" {
		t.Errorf("got singular name %q, want configmap", got)
	}
	if !store.NamespaceScoped() {
		t.Error("got cluster-scoped, want namespaced")
	}

	// An invalid configmap is 422 with the validation's causes.
	_, err = store.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name"},
		Data:       map[string]string{"a b": "x", "ok": "y"},
		BinaryData: map[string][]byte{"ok": nil},
	}, nil, &metav1.CreateOptions{})
	want := []string{"FieldValueInvalid metadata.name", "FieldValueInvalid data[a b]", "FieldValueInvalid data[ok]"}
	if got := registrytest.Causes(t, err); !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}

	// Over 1 MiB in total.
	_, err = store.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "big"},
		Data:       map[string]string{"a": strings.Repeat("x", corev1.MaxSecretSize)},
		BinaryData: map[string][]byte{"b": {1}},
	}, nil, &metav1.CreateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueTooLong []"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}

	obj, err := store.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Data:       map[string]string{"k": "v"},
		Immutable:  ptr(true),
	}, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	cm := obj.(*corev1.ConfigMap)

	// Immutable: data cannot change, labels can.
	changed := cm.DeepCopy()
	changed.Data["k"] = "w"
	_, _, err = store.Update(ctx, "app", registrytest.Updated{Obj: changed}, nil, nil, false, &metav1.UpdateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueForbidden data"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}
	if msg := registrytest.Status(t, err).Message; !strings.Contains(msg, "field is immutable when `immutable` is set") {
		t.Errorf("got message %q, want kube's immutable message", msg)
	}
	labelled := cm.DeepCopy()
	labelled.Labels = map[string]string{"a": "b"}
	labelled.ResourceVersion = "" // unconditional updates are allowed
	if _, _, err := store.Update(ctx, "app", registrytest.Updated{Obj: labelled}, nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		t.Errorf("label an immutable configmap: %v", err)
	}

	// No create on update.
	missing := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "missing", Namespace: "default"}}
	_, _, err = store.Update(ctx, "missing", registrytest.Updated{Obj: missing}, nil, nil, false, &metav1.UpdateOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("got %v, want NotFound for a PUT of a missing configmap", err)
	}
}

func TestConfigMapTable(t *testing.T) {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "app", CreationTimestamp: metav1.NewTime(time.Now().Add(-5 * time.Minute))},
		Data:       map[string]string{"a": "1", "b": "2"},
		BinaryData: map[string][]byte{"c": nil},
	}
	list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "7"}, Items: []corev1.ConfigMap{*cm}}
	tbl, err := TableConvertor.ConvertToTable(t.Context(), list, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if got, want := strings.Join(names, ","), "Name,Data,Age"; got != want {
		t.Errorf("got columns %s, want %s", got, want)
	}
	if len(tbl.Rows) != 1 {
		t.Fatalf("got %d rows, want 1", len(tbl.Rows))
	}
	if got, want := tbl.Rows[0].Cells, []any{"app", int64(3), "5m"}; !slices.Equal(got, want) {
		t.Errorf("got cells %v, want %v", got, want)
	}
	if tbl.ResourceVersion != "7" {
		t.Errorf("got resourceVersion %q, want 7", tbl.ResourceVersion)
	}
	tbl, err = TableConvertor.ConvertToTable(t.Context(), &corev1.ConfigMapList{}, &metav1.TableOptions{NoHeaders: true})
	if err != nil {
		t.Fatal(err)
	}
	if tbl.ColumnDefinitions != nil || tbl.Rows == nil || len(tbl.Rows) != 0 {
		t.Errorf("got columns %v rows %v, want no columns and an empty row list", tbl.ColumnDefinitions, tbl.Rows)
	}
}

func ptr[T any](v T) *T { return &v }
