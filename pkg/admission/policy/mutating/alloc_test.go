package mutating

import (
	"context"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"

	"github.com/kapi-dev/kapi/pkg/admission/admissiontest"
	"github.com/kapi-dev/kapi/pkg/admission/configsource/configsourcetest"
)

// TestNoPoliciesNoAllocation: with no MutatingAdmissionPolicy, Admit
// allocates nothing — every write asks it (session 23: each call used to
// copy the request's Attributes to the heap before finding no policy).
func TestNoPoliciesNoAllocation(t *testing.T) {
	p := New(configsourcetest.Static{Objects: &arv1.MutatingAdmissionPolicyList{}},
		configsourcetest.Static{Objects: &arv1.MutatingAdmissionPolicyBindingList{}}, Options{})
	configsourcetest.Run(t, p.Run)
	ctx, a := context.Background(), admissiontest.ConfigMapUpdate()
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
