package etcd3

import (
	"context"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// TestTTLLeases: writes made with storage.WithTTL attach their keys to an
// etcd lease, shared as upstream's lease manager shares it: granted for
// the TTL plus 5% of it (at most 60 s), reused while it outlives a
// write's TTL by no more than that; every grant records the objects of
// the previous lease, with the write that needed the new one, in
// etcd_lease_object_counts (1 for the first). Writes without a TTL have
// no lease; an update without a change writes nothing, so asks for none.
func TestTTLLeases(t *testing.T) {
	reg, srv, s := configMapStoreWithMetrics(t, "events")
	ctx := context.Background()
	ttlCtx := storage.WithTTL(ctx, 3600)
	leaseOf := func(name string) clientv3.LeaseID {
		t.Helper()
		resp, err := srv.Client().Get(ctx, s.pathPrefix+cmKey(name)[1:])
		if err != nil || len(resp.Kvs) != 1 {
			t.Fatalf("get %s: %v %v", name, resp, err)
		}
		return clientv3.LeaseID(resp.Kvs[0].Lease)
	}
	counts := func() (count uint64, sum float64) {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "etcd_lease_object_counts" {
				h := mf.GetMetric()[0].GetHistogram()
				return h.GetSampleCount(), h.GetSampleSum()
			}
		}
		t.Fatal("etcd_lease_object_counts not registered")
		return 0, 0
	}

	if c, _ := counts(); c != 0 {
		t.Fatalf("before any write: %d observations", c)
	}
	for _, name := range []string{"a", "b"} {
		if err := s.Create(ttlCtx, cmKey(name), newCM(name, nil, nil), &corev1.ConfigMap{}); err != nil {
			t.Fatal(err)
		}
	}
	mustCreate(t, s, newCM("plain", nil, nil))
	a, b := leaseOf("a"), leaseOf("b")
	if a == 0 || a != b {
		t.Fatalf("leases of a and b: %x, %x; want one shared lease", a, b)
	}
	if l := leaseOf("plain"); l != 0 {
		t.Fatalf("a key written without a TTL has lease %x", l)
	}
	ttl, err := srv.Client().TimeToLive(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if ttl.GrantedTTL != 3600+60 {
		t.Fatalf("granted TTL %d, want 3660 (the TTL and the reuse period)", ttl.GrantedTTL)
	}
	if c, sum := counts(); c != 1 || sum != 1 {
		t.Fatalf("after two creates: count %d sum %g, want 1 and 1", c, sum)
	}

	// An update with the TTL reuses the lease; one without keeps none.
	update := func(ctx context.Context, name, v string) {
		t.Helper()
		err := s.GuaranteedUpdate(ctx, cmKey(name), &corev1.ConfigMap{}, false, nil, func(in runtime.Object) (runtime.Object, error) {
			cm := in.(*corev1.ConfigMap)
			cm.Data = map[string]string{"k": v}
			return cm, nil
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	update(ttlCtx, "a", "1")
	if l := leaseOf("a"); l != a {
		t.Fatalf("after an update: lease %x, want %x", l, a)
	}
	update(ttlCtx, "a", "1") // no change: no write, no lease asked for
	update(ctx, "b", "1")
	if l := leaseOf("b"); l != 0 {
		t.Fatalf("after an update without TTL: lease %x", l)
	}

	// A short TTL (reuse period 0) needs a new lease every write: each
	// grant records the previous lease's objects with this write.
	short := storage.WithTTL(ctx, 15)
	for _, name := range []string{"c", "d"} {
		if err := s.Create(short, cmKey(name), newCM(name, nil, nil), &corev1.ConfigMap{}); err != nil {
			t.Fatal(err)
		}
	}
	if leaseOf("c") == leaseOf("d") || leaseOf("c") == a {
		t.Fatal("writes with a 15 s TTL share a lease")
	}
	// a, b, a's update, then c: 4 on the first lease; d: 2 (c's and d's).
	if c, sum := counts(); c != 3 || sum != 1+4+2 {
		t.Fatalf("after the short TTLs: count %d sum %g, want 3 and 7", c, sum)
	}
}
