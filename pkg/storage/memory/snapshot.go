package memory

import (
	"maps"
	"slices"
	"strings"
)

// Read returns the current value of every live key that starts with
// prefix, and the revision it read them at. The values are shared with
// the backend: callers must not modify them.
func (b *Backend) Read(prefix string) (map[string][]byte, uint64, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return nil, 0, errClosed(prefix)
	}
	out := map[string][]byte{}
	b.keys.ascend(prefix, func(k string) bool {
		if !strings.HasPrefix(k, prefix) {
			return false
		}
		if s, ok := b.latestLocked(k); ok {
			out[k] = s.data
		}
		return true
	})
	return out, b.rev, nil
}

// Keys returns the live keys that start with prefix, in order, and the
// revision it read them at: Read without the values, for callers that
// compare key sets (kapitest's Reset).
func (b *Backend) Keys(prefix string) ([]string, uint64, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return nil, 0, errClosed(prefix)
	}
	out := make([]string, 0, b.keys.len())
	b.keys.ascend(prefix, func(k string) bool {
		if !strings.HasPrefix(k, prefix) {
			return false
		}
		if h := b.hist[k]; h != nil && h.versions[len(h.versions)-1].val != nil {
			out = append(out, k)
		}
		return true
	})
	return out, b.rev, nil
}

// Apply writes deletes, then puts (key -> value), without preconditions
// and under one hold of the store's lock: readers and writers see all of
// it or none of it (a namespace and its objects go at once). Each change
// has a revision of its own (deletes in the order given, puts by key) and
// is published to watchers exactly as Create, GuaranteedUpdate and Delete
// publish theirs, so that watchers see every change; a watcher whose
// buffer the batch fills is terminated as slow, as it is by any burst of
// writes (clients then watch again or relist). A delete of a missing key
// and a put of the value a key already holds are skipped. It returns the
// revision after the last write.
func (b *Backend) Apply(puts map[string][]byte, deletes []string) (uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, errClosed("")
	}
	// Watchers wake once, when the whole batch is queued, instead of
	// once per change (their readers would compete with this writer for
	// the queue's lock and the CPU during the batch).
	wb := b.newWriteBatch()
	defer b.finishLocked(wb)
	for _, k := range deletes {
		if _, exists := b.latestLocked(k); exists {
			b.writeBatchLocked(&event{kind: eventDelete, key: k}, wb)
		}
	}
	for _, k := range sortedPutKeys(puts) {
		v := puts[k]
		if v == nil {
			v = []byte{}
		}
		if cur, exists := b.latestLocked(k); exists && string(cur.data) == string(v) {
			continue
		}
		b.writeBatchLocked(&event{kind: eventPut, key: k, value: newBlob(v)}, wb)
	}
	return b.rev, nil
}

// sortedPutKeys is the order Apply writes puts in: by key, so that the
// revisions do not depend on map order.
func sortedPutKeys(puts map[string][]byte) []string {
	return slices.Sorted(maps.Keys(puts))
}
