package memory

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kapi-dev/kapi/pkg/storage/internal/delta"
)

// crJSON is a custom resource as the memory backend stores it after the
// n-th update (kapi-bench's objects: generation, a managedFields time and
// spec.n change on every write).
func crJSON(name string, n int) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"bench.kapi.dev/v1","kind":"BenchThing","metadata":{"creationTimestamp":"2026-11-27T02:59:05Z","generation":%d,`+
		`"managedFields":[{"apiVersion":"bench.kapi.dev/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{".":{},"f:n":{},"f:tags":{},"f:text":{}}},"manager":"kapi-bench","operation":"Update","time":"2026-11-27T03:%02d:%02dZ"}],`+
		`"name":%q,"namespace":"bench","uid":"6f1c1d8e-0b7a-4a57-9d0e-2f4b9c3e8a11"},"spec":{"n":%d,"tags":["a","b","c"],"text":"a custom resource of a few hundred bytes, as a small controller's objects are; padding padding padding padding padding"}}`+"\n",
		n+1, n/60%60, n%60, name, n)
}

func TestDeltaRoundTrip(t *testing.T) {
	base := crJSON("t00001", 0)
	for n := range 200 {
		target := crJSON("t00001", n)
		d := delta.Append(nil, target, base, len(target)/2)
		if d == nil {
			t.Fatalf("n=%d: no delta of a %d-byte value against its first state", n, len(target))
		}
		if len(d) > 64 {
			t.Errorf("n=%d: delta is %d bytes for 3 changed fields, want at most 64", n, len(d))
		}
		if got := delta.Apply(base, d); !bytes.Equal(got, target) {
			t.Fatalf("n=%d: rebuilt\n%s\nwant\n%s", n, got, target)
		}
	}
}

// TestDeltaRandomEdits checks the delta of random edits (insertions,
// deletions, replacements, of random lengths) of random and repetitive
// bytes: either no delta or one that rebuilds the target exactly.
func TestDeltaRandomEdits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	made := 0
	for iter := range 20000 {
		base := make([]byte, r.IntN(700))
		alphabet := 2 + r.IntN(255) // small alphabets make many false resynchronisations
		for i := range base {
			base[i] = byte(r.IntN(alphabet))
		}
		target := bytes.Clone(base)
		for range r.IntN(6) {
			p := r.IntN(len(target) + 1)
			l := r.IntN(100)
			switch r.IntN(3) {
			case 0: // insert
				ins := make([]byte, l)
				for i := range ins {
					ins[i] = byte(r.IntN(alphabet))
				}
				target = append(target[:p:p], append(ins, target[p:]...)...)
			case 1: // delete
				target = append(target[:p:p], target[min(p+l, len(target)):]...)
			case 2: // replace
				for i := p; i < min(p+l, len(target)); i++ {
					target[i] = byte(r.IntN(alphabet))
				}
			}
		}
		limit := r.IntN(len(target) + 2)
		d := delta.Append(nil, target, base, limit)
		if d == nil {
			continue
		}
		made++
		if len(d) > limit {
			t.Fatalf("iter %d: delta of %d bytes over the limit %d", iter, len(d), limit)
		}
		if got := delta.Apply(base, d); !bytes.Equal(got, target) {
			t.Fatalf("iter %d: rebuilt value differs (base %d bytes, target %d)", iter, len(base), len(target))
		}
	}
	if made < 1000 {
		t.Fatalf("only %d of 20000 edits made a delta", made)
	}
}

// TestHistoryKeepsEveryStateWithDeltas writes, deletes and recreates keys
// and checks every past state reads back exactly, as the events' values,
// while superseded values are kept as deltas; compaction to the newest
// states forgets the anchors.
func TestHistoryKeepsEveryStateWithDeltas(t *testing.T) {
	b := newTestBackend(t, testConfig())
	type state struct {
		key  string
		rev  uint64
		data []byte // nil: deleted
	}
	var written []state
	cur := map[string]uint64{}
	keys := []string{"/things/a", "/things/b", "/things/c"}
	for n := range 300 {
		k := keys[n%len(keys)]
		if n%50 == 49 {
			rev, _, _, ok, err := b.compareAndDelete(k, cur[k])
			if err != nil || !ok {
				t.Fatalf("delete %s: ok=%v err=%v", k, ok, err)
			}
			cur[k] = 0
			written = append(written, state{key: k, rev: rev})
			continue
		}
		data := crJSON(k, n)
		rev, _, _, ok, err := b.compareAndPut(k, cur[k], data)
		if err != nil || !ok {
			t.Fatalf("put %s: ok=%v err=%v", k, ok, err)
		}
		cur[k] = rev
		written = append(written, state{key: k, rev: rev, data: data})
	}

	b.mu.RLock()
	deltas := 0
	for _, k := range keys {
		h := b.hist[k]
		for i, v := range h.versions {
			if v.val == nil {
				continue
			}
			if !v.val.whole() {
				deltas++
			} else if i < len(h.versions)-2 && v.val != h.anchor && !b.isAnchorOfDeltas(h, v.val) {
				t.Errorf("%s: superseded version at %d kept whole but no delta's base", k, v.rev)
			}
		}
		for _, v := range h.versions[max(0, len(h.versions)-2):] {
			if v.val != nil && !v.val.whole() {
				t.Errorf("%s: the newest value or the one before it (the newest event's prev) is a delta", k)
			}
		}
	}
	for _, s := range written {
		got, ok := b.atLocked(s.key, s.rev)
		if s.data == nil {
			if ok {
				t.Errorf("%s at %d: read %q, want deleted", s.key, s.rev, got.data)
			}
			continue
		}
		if !ok || !bytes.Equal(got.data, s.data) {
			t.Errorf("%s at %d: read %q (found %v), want %q", s.key, s.rev, got.data, ok, s.data)
		}
	}
	prev := map[string][]byte{}
	for i, ev := range b.events {
		s := written[i]
		if ev.rev != s.rev || ev.key != s.key {
			t.Fatalf("event %d is %s at %d, want %s at %d", i, ev.key, ev.rev, s.key, s.rev)
		}
		if !bytes.Equal(ev.value.bytes(), s.data) || (ev.value == nil) != (s.data == nil) {
			t.Errorf("event at %d: value %q, want %q", ev.rev, ev.value.bytes(), s.data)
		}
		if !bytes.Equal(ev.prev.bytes(), prev[s.key]) || (ev.prev == nil) != (prev[s.key] == nil) {
			t.Errorf("event at %d: prev %q, want %q", ev.rev, ev.prev.bytes(), prev[s.key])
		}
		prev[s.key] = s.data
	}
	b.mu.RUnlock()
	if deltas < 250 {
		t.Errorf("%d superseded values kept as deltas, want most of the ~290 values superseded twice", deltas)
	}

	if err := b.Compact(context.Background(), b.Revision()); err != nil {
		t.Fatalf("compact: %v", err)
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	for _, k := range keys {
		h := b.hist[k]
		if h == nil {
			continue
		}
		if h.anchor != nil {
			t.Errorf("%s: anchor kept after compaction to the newest state", k)
		}
		if s, ok := b.latestLocked(k); ok && !bytes.Equal(s.data, crJSON(k, int(s.rev)-1)) {
			t.Errorf("%s: newest state %q after compaction", k, s.data)
		}
	}
}

// isAnchorOfDeltas reports whether a delta of h has v as its base.
func (b *Backend) isAnchorOfDeltas(h *history, v *blob) bool {
	for _, o := range h.versions {
		if o.val != nil && o.val.st.Load().base == v {
			return true
		}
	}
	return false
}

func BenchmarkDelta(b *testing.B) {
	base := crJSON("t00001", 0)
	target := crJSON("t00001", 1234)
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		var d []byte
		var buf [256]byte
		for b.Loop() {
			d = delta.Append(buf[:0], target, base, len(target)/2)
		}
		b.ReportMetric(float64(len(d)), "delta-bytes")
		b.ReportMetric(float64(len(target)), "value-bytes")
	})
	b.Run("apply", func(b *testing.B) {
		b.ReportAllocs()
		d := delta.Append(nil, target, base, len(target)/2)
		for b.Loop() {
			delta.Apply(base, d)
		}
	})
}
