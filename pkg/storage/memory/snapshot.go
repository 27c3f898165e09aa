package memory

import (
	"strings"
	"time"
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

// applyChunk is how many writes Apply makes under one hold of the lock.
// Between chunks it lets watchers drain (see Apply).
const applyChunk = 256

// Apply writes puts (key -> value) and deletes without preconditions, one
// revision per change, and publishes every change to watchers exactly as
// Create, GuaranteedUpdate and Delete do, so that watch caches and clients
// stay coherent. A delete of a missing key and a put of the value a key
// already holds are skipped. Between chunks of writes it waits (up to a
// second) until no watcher's queue is more than half full, so that a large
// batch does not cut off watchers as too slow. It returns the revision
// after the last write.
func (b *Backend) Apply(puts map[string][]byte, deletes []string) (uint64, error) {
	type change struct {
		key  string
		data []byte // nil: delete
	}
	changes := make([]change, 0, len(puts)+len(deletes))
	for _, k := range deletes {
		changes = append(changes, change{key: k})
	}
	for k, v := range puts {
		if v == nil {
			v = []byte{}
		}
		changes = append(changes, change{key: k, data: v})
	}
	for len(changes) > 0 {
		n := min(len(changes), applyChunk)
		if err := b.applyLocked(func() {
			for _, c := range changes[:n] {
				cur, exists := b.latestLocked(c.key)
				switch {
				case c.data == nil && exists:
					b.writeLocked(&event{kind: eventDelete, key: c.key, prev: cur.data})
				case c.data != nil && (!exists || string(cur.data) != string(c.data)):
					var prev []byte
					if exists {
						prev = cur.data
					}
					b.writeLocked(&event{kind: eventPut, key: c.key, value: c.data, prev: prev})
				}
			}
		}); err != nil {
			return 0, err
		}
		changes = changes[n:]
		if len(changes) > 0 {
			b.waitWatchersDrained(time.Second)
		}
	}
	return b.Revision(), nil
}

func (b *Backend) applyLocked(fn func()) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return errClosed("")
	}
	fn()
	return nil
}

// waitWatchersDrained waits until every watcher's queue is at most half
// full, or timeout.
func (b *Backend) waitWatchersDrained(timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for {
		b.mu.RLock()
		busy := false
		for w := range b.watchers {
			if len(w.in) > cap(w.in)/2 {
				busy = true
				break
			}
		}
		b.mu.RUnlock()
		if !busy || time.Now().After(deadline) {
			return
		}
		time.Sleep(200 * time.Microsecond)
	}
}
