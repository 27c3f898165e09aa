package etcd3

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
)

// Lease reuse, as kube-apiserver's etcd3 store (k8s.io/apiserver v0.37.2
// pkg/storage/etcd3 lease manager, its default configuration): the keys a
// store writes with a TTL share an etcd lease for a while instead of one
// lease per write. A lease granted for a TTL is granted with extra time,
// the reuse period (5% of the TTL, at most 60 s, whole seconds); a later
// write reuses it while the lease outlives that write's TTL, by no more
// than the reuse period, and at most 1000 objects were attached to it.
const (
	leaseReuseMaxSeconds = 60
	leaseReusePercent    = 0.05
	leaseMaxObjects      = 1000
)

// leases grants and reuses the etcd leases of one store.
type leases struct {
	client  *clientv3.Client
	metrics *storagemetrics.Resource

	mu      sync.Mutex
	id      clientv3.LeaseID
	expires time.Time // of id; zero: none yet
	// attached counts the writes that asked for a lease since id was
	// granted, the one it was granted for included.
	attached int64
}

// reuseSeconds is the reuse period of a TTL.
func reuseSeconds(ttl int64) int64 {
	return min(int64(leaseReusePercent*float64(ttl)), leaseReuseMaxSeconds)
}

// get returns the lease to attach a key written with ttl seconds to.
// Every call counts towards the current lease, failed writes included;
// when a new lease is granted, the count of the previous one (with this
// call) is recorded in etcd_lease_object_counts, as upstream.
func (l *leases) get(ctx context.Context, ttl int64) (clientv3.LeaseID, error) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	reuse := reuseSeconds(ttl)
	valid := now.Add(time.Duration(ttl) * time.Second).Before(l.expires)
	sufficient := now.Add(time.Duration(ttl+reuse) * time.Second).After(l.expires)
	l.attached++
	if valid && sufficient && l.attached <= leaseMaxObjects {
		return l.id, nil
	}
	resp, err := l.client.Grant(ctx, ttl+reuse)
	if err != nil {
		return 0, err
	}
	l.id = resp.ID
	l.expires = now.Add(time.Duration(ttl+reuse) * time.Second)
	l.metrics.LeaseObjectCount(l.attached)
	l.attached = 1
	return l.id, nil
}
