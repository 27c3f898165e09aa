package tokencache

import (
	"container/heap"
	"hash/fnv"
	"sync"
	"time"
)

// stripes is how many independently locked maps a store spreads its keys
// over (upstream's striped cache has 32).
const stripes = 32

// store maps keys to records that expire. Expired records are never
// returned, and are dropped when a later set finds them due (as
// upstream's expiring cache collects them), so a store holds about as
// many records as were set within one TTL.
type store struct {
	now     func() time.Time
	stripes [stripes]stripe
}

type stripe struct {
	mu         sync.RWMutex
	entries    map[string]storeEntry
	expiries   expiryHeap
	generation uint64
}

type storeEntry struct {
	rec        *record
	expiry     time.Time
	generation uint64
}

func newStore(now func() time.Time) *store {
	s := &store{now: now}
	for i := range s.stripes {
		s.stripes[i].entries = map[string]storeEntry{}
	}
	return s
}

func (s *store) stripe(key string) *stripe {
	h := fnv.New32()
	h.Write([]byte(key))
	return &s.stripes[h.Sum32()%stripes]
}

// get returns the record of key unless there is none or it has expired
// (a record is good while now is before its expiry).
func (s *store) get(key string) (*record, bool) {
	st := s.stripe(key)
	st.mu.RLock()
	e, ok := st.entries[key]
	st.mu.RUnlock()
	if !ok || !s.now().Before(e.expiry) {
		return nil, false
	}
	return e.rec, true
}

// set keeps rec under key for ttl, replacing what was there, and drops
// the records that have expired.
func (s *store) set(key string, rec *record, ttl time.Duration) {
	now := s.now()
	expiry := now.Add(ttl)
	st := s.stripe(key)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.generation++
	st.entries[key] = storeEntry{rec: rec, expiry: expiry, generation: st.generation}
	for len(st.expiries) > 0 && !now.Before(st.expiries[0].expiry) {
		due := heap.Pop(&st.expiries).(expiryItem)
		// A key set again since has a newer generation: keep it.
		if e, ok := st.entries[due.key]; ok && e.generation == due.generation {
			delete(st.entries, due.key)
		}
	}
	heap.Push(&st.expiries, expiryItem{key: key, expiry: expiry, generation: st.generation})
}

// len is the number of records held, expired or not (for tests).
func (s *store) len() int {
	n := 0
	for i := range s.stripes {
		st := &s.stripes[i]
		st.mu.RLock()
		n += len(st.entries)
		st.mu.RUnlock()
	}
	return n
}

type expiryItem struct {
	key        string
	expiry     time.Time
	generation uint64
}

// expiryHeap is a min-heap of expiries (container/heap).
type expiryHeap []expiryItem

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].expiry.Before(h[j].expiry) }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiryItem)) }
func (h *expiryHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = expiryItem{}
	*h = old[:len(old)-1]
	return it
}
