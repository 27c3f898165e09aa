package webhook

import (
	"context"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"

	"github.com/kapi-dev/kapi/pkg/admission/admissiontest"
)

// TestNoWebhooksNoAllocation: with no webhook configured, asking the
// dispatchers about a write allocates nothing — every write request of a
// server asks both (session 23: each call used to copy the request's
// Attributes to the heap, ~250 bytes, before finding no webhook).
func TestNoWebhooksNoAllocation(t *testing.T) {
	validating := NewDispatcher(runSource(t, &arv1.ValidatingWebhookConfigurationList{}, CompileValidating), Options{})
	mutating := NewDispatcher(runSource(t, &arv1.MutatingWebhookConfigurationList{}, CompileMutating), Options{})
	ctx, a := context.Background(), admissiontest.ConfigMapUpdate()
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
