package validation

import (
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestValidateLease(t *testing.T) {
	lease := func(mut func(*coordinationv1.LeaseSpec)) *coordinationv1.Lease {
		l := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: "node-1", Namespace: "kube-node-lease", ResourceVersion: "1"},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity:       ptr("node-1"),
				LeaseDurationSeconds: ptr(int32(40)),
				RenewTime:            &metav1.MicroTime{Time: metav1.Now().Time},
			},
		}
		if mut != nil {
			mut(&l.Spec)
		}
		return l
	}
	strategy := func(s string) *coordinationv1.CoordinatedLeaseStrategy {
		v := coordinationv1.CoordinatedLeaseStrategy(s)
		return &v
	}
	cases := []struct {
		name string
		l    *coordinationv1.Lease
		want []string
	}{
		{"valid", lease(nil), nil},
		{"empty spec", lease(func(s *coordinationv1.LeaseSpec) { *s = coordinationv1.LeaseSpec{} }), nil},
		{"zero duration", lease(func(s *coordinationv1.LeaseSpec) { s.LeaseDurationSeconds = ptr(int32(0)) }),
			[]string{invalid + " spec.leaseDurationSeconds"}},
		{"negative duration", lease(func(s *coordinationv1.LeaseSpec) { s.LeaseDurationSeconds = ptr(int32(-1)) }),
			[]string{invalid + " spec.leaseDurationSeconds"}},
		{"negative transitions", lease(func(s *coordinationv1.LeaseSpec) { s.LeaseTransitions = ptr(int32(-1)) }),
			[]string{invalid + " spec.leaseTransitions"}},
		{"zero transitions", lease(func(s *coordinationv1.LeaseSpec) { s.LeaseTransitions = ptr(int32(0)) }), nil},
		{"known strategy", lease(func(s *coordinationv1.LeaseSpec) { s.Strategy = strategy("OldestEmulationVersion") }), nil},
		{"qualified strategy", lease(func(s *coordinationv1.LeaseSpec) { s.Strategy = strategy("example.com/mine") }), nil},
		{"unknown strategy", lease(func(s *coordinationv1.LeaseSpec) { s.Strategy = strategy("Mine") }),
			[]string{unsupported + " spec.strategy.strategy"}},
		{"malformed strategy", lease(func(s *coordinationv1.LeaseSpec) { s.Strategy = strategy("a/b/c") }),
			[]string{invalid + " spec.strategy.strategy"}},
		{"preferred holder without strategy", lease(func(s *coordinationv1.LeaseSpec) { s.PreferredHolder = ptr("x") }),
			[]string{forbidden + " spec.preferredHolder"}},
		{"preferred holder with strategy", lease(func(s *coordinationv1.LeaseSpec) {
			s.PreferredHolder = ptr("x")
			s.Strategy = strategy("OldestEmulationVersion")
		}), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, ValidateLease(tc.l), tc.want...)
			checkErrs(t, ValidateLeaseUpdate(tc.l, lease(nil)), tc.want...)
		})
	}
	checkDetail(t, ValidateLeaseFields(lease(func(s *coordinationv1.LeaseSpec) { s.LeaseDurationSeconds = ptr(int32(0)) })),
		"spec.leaseDurationSeconds", "must be greater than 0")
	bad := lease(nil)
	bad.Name = "Node_1"
	checkErrs(t, ValidateLease(bad), invalid+" metadata.name")
	checkErrs(t, ValidateLeaseFields(bad))
}
