package webhook

import (
	"context"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// TestNoWebhooksNoAllocation: with no webhook configured, asking the
// dispatchers about a write allocates nothing — every write request of a
// server asks both (session 23: each call used to copy the request's
// Attributes to the heap, ~250 bytes, before finding no webhook).
func TestNoWebhooksNoAllocation(t *testing.T) {
	ctx := context.Background()
	a := admission.Attributes{
		Operation: admission.Update,
		Resource:  schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Kind:      schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
		Namespace: "default", Name: "a",
		Object: &corev1.ConfigMap{}, OldObject: &corev1.ConfigMap{},
	}
	validating := NewDispatcher(runSource(t, &arv1.ValidatingWebhookConfigurationList{}, CompileValidating), Options{})
	mutating := NewDispatcher(runSource(t, &arv1.MutatingWebhookConfigurationList{}, CompileMutating), Options{})
	// The first calls wait for the sources' lists.
	if err := validating.Validate(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := mutating.Admit(ctx, a); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if err := validating.Validate(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := mutating.Admit(ctx, a); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%v allocations per Validate and Admit with no webhook, want 0", n)
	}
}
