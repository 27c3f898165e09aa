package etcd3

import (
	"strings"
	"sync"

	"go.etcd.io/etcd/api/v3/mvccpb"
)

// sizeEstimator remembers, per key, the size of the value last read from
// etcd (by a list, or a watch event) and the revision it was read at, as
// upstream's resourceSizeEstimator (k8s.io/apiserver pkg/storage/etcd3
// stats.go): the estimate of a resource's size is the average of the sizes
// known for its current keys times their number. An older read never
// replaces a newer one. Keys are the store's keys without its path
// prefix.
type sizeEstimator struct {
	mu    sync.Mutex
	sizes map[string]sizeAt
}

type sizeAt struct {
	size, rev int64
}

// observe records the size of each of kvs that is newer than what is
// known.
func (e *sizeEstimator) observe(prefix string, kvs []*mvccpb.KeyValue) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, kv := range kvs {
		if kv != nil {
			e.observeLocked(prefix, kv)
		}
	}
}

// observeOne is observe of one value.
func (e *sizeEstimator) observeOne(prefix string, kv *mvccpb.KeyValue) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.observeLocked(prefix, kv)
}

func (e *sizeEstimator) observeLocked(prefix string, kv *mvccpb.KeyValue) {
	k := kv.Key[min(len(prefix), len(kv.Key)):]
	if old, ok := e.sizes[string(k)]; ok && old.rev >= kv.ModRevision {
		return
	}
	e.sizes[string(k)] = sizeAt{size: int64(len(kv.Value)), rev: kv.ModRevision}
}

// forget drops kv's key unless a newer value is known (a delete event:
// kv.ModRevision is the deletion's revision).
func (e *sizeEstimator) forget(prefix string, kv *mvccpb.KeyValue) {
	k := kv.Key[min(len(prefix), len(kv.Key)):]
	e.mu.Lock()
	defer e.mu.Unlock()
	if old, ok := e.sizes[string(k)]; ok && old.rev < kv.ModRevision {
		delete(e.sizes, string(k))
	}
}

// estimate returns the estimated size of the objects under keys: the
// average known size of those keys times their number; -1 when there are
// keys but no known size (upstream reports -1 when its average is 0). Sizes
// of keys not among keys are forgotten (deletes the watch did not see),
// as upstream's cleanup does. keys must be distinct.
func (e *sizeEstimator) estimate(keys []string) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	kept := make(map[string]sizeAt, len(keys))
	var total int64
	for _, k := range keys {
		k = strings.TrimPrefix(k, "/")
		if s, ok := e.sizes[k]; ok {
			total += s.size
			kept[k] = s
		}
	}
	e.sizes = kept
	if len(keys) == 0 {
		return 0
	}
	var avg int64
	if len(kept) > 0 {
		avg = total / int64(len(kept))
	}
	if avg == 0 {
		return -1
	}
	return avg * int64(len(keys))
}

// EnableSizeEstimation makes the store remember the size of each value
// it reads from etcd (by GetList and its watches), for EstimateSize. Upstream
// does so for the resources its watch cache holds.
func (s *Store) EnableSizeEstimation() {
	s.sizesOnce.Do(func() {
		s.sizes.Store(&sizeEstimator{sizes: make(map[string]sizeAt)})
	})
}

// EstimateSize estimates the stored size of the objects under keys (the
// storage keys of the resource's current objects, as the watch cache holds
// them): see sizeEstimator.estimate. It reports false unless
// EnableSizeEstimation was called.
func (s *Store) EstimateSize(keys []string) (int64, bool) {
	e := s.sizes.Load()
	if e == nil {
		return 0, false
	}
	return e.estimate(keys), true
}
