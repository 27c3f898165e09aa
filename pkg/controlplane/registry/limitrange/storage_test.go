package limitrange

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func TestLimitRangeStore(t *testing.T) {
	store, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("", "v1", "limitranges", "default")
	if !store.NamespaceScoped() || !slices.Equal(store.ShortNames(), []string{"limits"}) {
		t.Errorf("got namespaced %t, short names %v; want namespaced, [limits]", store.NamespaceScoped(), store.ShortNames())
	}
	item := corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("800m")}}
	// Without a name, upstream names it with a UUID.
	obj, err := store.Create(ctx, &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{item}}}, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create without a name: %v", err)
	}
	if name := obj.(*corev1.LimitRange).Name; len(uuid.NewUUID()) != len(name) {
		t.Errorf("got name %q, want a UUID", name)
	}
	// A PUT of a missing limit range creates it.
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "put", Namespace: "default"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{item}}}
	if _, created, err := store.Update(ctx, "put", registrytest.Updated{Obj: lr}, nil, nil, false, &metav1.UpdateOptions{}); err != nil || !created {
		t.Errorf("got created %t, %v; want a PUT to create", created, err)
	}
	// Validation.
	bad := lr.DeepCopy()
	bad.Name = "bad"
	bad.Spec.Limits[0].Min = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	_, err = store.Create(ctx, bad, nil, &metav1.CreateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueInvalid spec.limits[0].min[cpu]"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}
	// Tables are the default NAME CREATED AT (upstream has no printer).
	tbl, err := store.ConvertToTable(ctx, lr, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if want := []string{"Name", "Created At"}; !slices.Equal(names, want) {
		t.Errorf("got columns %v, want %v", names, want)
	}
}
