package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestEtcdLeaseObjectCounts: etcd_lease_object_counts has the reference's
// HELP, TYPE and buckets (kube-apiserver v1.37.2's /metrics), and records
// what upstream's etcd3 store records for Events, which it writes under
// etcd leases of --event-ttl: a store's first lease counts 1 when it is
// granted; later events within the reuse period (60 s for the hour's TTL)
// share it and record nothing. The memory backend has no leases: the
// family stays empty. (The reference also records the leases of its
// peer endpoint reconciler, which kapi does not have: see
// docs/compatibility.md, session 25.)
func TestEtcdLeaseObjectCounts(t *testing.T) {
	lines := func(n, sum int) []string {
		out := []string{
			"# HELP etcd_lease_object_counts [ALPHA] Number of objects attached to a single etcd lease.",
			"# TYPE etcd_lease_object_counts histogram",
		}
		for _, le := range []string{"10", "50", "100", "500", "1000", "2500", "5000", "+Inf"} {
			out = append(out, fmt.Sprintf("etcd_lease_object_counts_bucket{le=%q} %d", le, n))
		}
		return append(out, fmt.Sprintf("etcd_lease_object_counts_sum %d", sum), fmt.Sprintf("etcd_lease_object_counts_count %d", n))
	}
	for _, tc := range []struct {
		name string
		opts []kapitest.Option
		want int
	}{{"etcd", []kapitest.Option{kapitest.WithEmbeddedEtcd()}, 1}, {"memory", nil, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := kapitest.Start(t, tc.opts...)
			family := func() []string {
				text := metricsText(t, srv.Config)
				return append(familyLines(text, "etcd_lease_object_counts"),
					append(familyLines(text, "etcd_lease_object_counts_bucket"),
						append(familyLines(text, "etcd_lease_object_counts_sum"), familyLines(text, "etcd_lease_object_counts_count")...)...)...)
			}
			if got, want := family(), lines(0, 0); !slices.Equal(got, want) {
				t.Fatalf("at start: got\n%q\nwant\n%q", got, want)
			}
			events := mustClientset(t, srv.Config).CoreV1().Events("default")
			ctx := context.Background()
			for i := range 3 {
				ev := &corev1.Event{
					ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("e%d", i)},
					InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "p"},
					Reason:         "Test", Message: "m", Type: corev1.EventTypeNormal,
				}
				if _, err := events.Create(ctx, ev, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			e, err := events.Get(ctx, "e0", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			e.Count = 2
			if _, err := events.Update(ctx, e, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if got, want := family(), lines(tc.want, tc.want); !slices.Equal(got, want) {
				t.Fatalf("after four event writes: got\n%q\nwant\n%q", got, want)
			}
		})
	}
}
