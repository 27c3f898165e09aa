package mutating

import (
	"context"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// TestNoPoliciesNoAllocation: with no MutatingAdmissionPolicy, Admit
// allocates nothing — every write asks it (session 23: each call used to
// copy the request's Attributes to the heap before finding no policy).
func TestNoPoliciesNoAllocation(t *testing.T) {
	p := New(staticLW{&arv1.MutatingAdmissionPolicyList{}}, staticLW{&arv1.MutatingAdmissionPolicyBindingList{}}, Options{})
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
	if err := p.Admit(ctx, a); err != nil { // waits for the lists
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if err := p.Admit(ctx, a); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%v allocations per Admit with no policy, want 0", n)
	}
}
