package validating

import (
	"context"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// emptyLW lists nothing and never sends a watch event.
type emptyLW struct{ list runtime.Object }

func (l emptyLW) List(context.Context, *metainternalversion.ListOptions) (runtime.Object, error) {
	return l.list, nil
}

func (l emptyLW) Watch(ctx context.Context, _ *metainternalversion.ListOptions) (watch.Interface, error) {
	w := watch.NewFake()
	go func() { <-ctx.Done(); w.Stop() }()
	return w, nil
}

// TestNoPoliciesNoAllocation: with no ValidatingAdmissionPolicy,
// ReadsObjects and Validate allocate nothing — every write asks them
// (session 23: each call used to copy the request's Attributes to the
// heap before finding no policy).
func TestNoPoliciesNoAllocation(t *testing.T) {
	p := New(emptyLW{&arv1.ValidatingAdmissionPolicyList{}}, emptyLW{&arv1.ValidatingAdmissionPolicyBindingList{}}, nil, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	a := admission.Attributes{
		Operation: admission.Update,
		Resource:  schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Kind:      schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
		Namespace: "default", Name: "a",
		Object: &corev1.ConfigMap{}, OldObject: &corev1.ConfigMap{},
	}
	if err := p.Validate(ctx, a); err != nil { // waits for the lists
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if p.ReadsObjects(a) {
			t.Fatal("ReadsObjects with no policy")
		}
		if err := p.Validate(ctx, a); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%v allocations per ReadsObjects and Validate with no policy, want 0", n)
	}
}
