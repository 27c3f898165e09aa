package priorityclass

import (
	"strings"
	"testing"

	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// Creates check the reserved names; updates only the immutable fields;
// system classes cannot be deleted, others can.
func TestStore(t *testing.T) {
	r, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Destroy()
	ctx := registrytest.Context("scheduling.k8s.io", "v1", "priorityclasses", "")
	_, err = r.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "system-x"}, Value: 1}, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if got := strings.Join(registrytest.Causes(t, err), ","); got != "FieldValueForbidden metadata.name" {
		t.Errorf("reserved name: %s (%v)", got, err)
	}
	sys := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "system-node-critical"}, Value: 2000001000}
	created, err := r.Create(ctx, sys, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Generation 1 from create on, never bumped (kube-apiserver v1.37.2).
	if g := created.(*schedulingv1.PriorityClass).Generation; g != 1 {
		t.Errorf("generation %d on create, want 1", g)
	}
	// A system class's description may change (upstream's update
	// validation does not check the reserved names again).
	out, _, err := r.Update(ctx, sys.Name, registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*schedulingv1.PriorityClass).Description = "changed"
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil || out.(*schedulingv1.PriorityClass).Description != "changed" {
		t.Fatalf("update description: %v", err)
	}
	if g := out.(*schedulingv1.PriorityClass).Generation; g != 1 {
		t.Errorf("generation %d after an update, want 1", g)
	}
	_, _, err = r.Update(ctx, sys.Name, registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*schedulingv1.PriorityClass).Value = 5
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if got := strings.Join(registrytest.Causes(t, err), ","); got != "FieldValueForbidden value" {
		t.Errorf("value change: %s", got)
	}
	if _, _, err := r.Delete(ctx, sys.Name, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("delete a system class: %v", err)
	}
	if _, err := r.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "low"}, Value: -10}, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Delete(ctx, "low", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
		t.Errorf("delete a user class: %v", err)
	}
}
