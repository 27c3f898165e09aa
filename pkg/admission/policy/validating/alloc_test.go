package validating

import (
	"context"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"

	"github.com/kapi-dev/kapi/pkg/admission/admissiontest"
	"github.com/kapi-dev/kapi/pkg/admission/configsource/configsourcetest"
)

// TestNoPoliciesNoAllocation: with no ValidatingAdmissionPolicy,
// ReadsObjects and Validate allocate nothing — every write asks them
// (session 23: each call used to copy the request's Attributes to the
// heap before finding no policy).
func TestNoPoliciesNoAllocation(t *testing.T) {
	p := New(configsourcetest.Static{Objects: &arv1.ValidatingAdmissionPolicyList{}},
		configsourcetest.Static{Objects: &arv1.ValidatingAdmissionPolicyBindingList{}}, nil, Options{})
	configsourcetest.Run(t, p.Run)
	ctx, a := context.Background(), admissiontest.ConfigMapUpdate()
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
