package memory

import "testing"

// TestEventQueue checks that the growable queue keeps events in order
// through growth and wrap-around, refuses the event past its limit (the
// "slow watcher" cut-off), signals readiness and lets a large emptied
// buffer go.
func TestEventQueue(t *testing.T) {
	const limit = 100
	q := newEventQueue(limit)
	if q.buf != nil {
		t.Fatalf("new queue holds a buffer of %d: want none until the first push", len(q.buf))
	}
	next, want := uint64(1), uint64(1)
	// Interleave pushes and pops so the ring wraps while it grows.
	for round := range 12 { // 78 queued at the end
		for range round + 3 {
			if !q.push(&event{rev: next}) {
				t.Fatalf("push %d refused with %d queued (limit %d)", next, q.n, limit)
			}
			next++
		}
		for range 2 {
			ev, ok := q.pop()
			if !ok || ev.rev != want {
				t.Fatalf("pop = %v, %v; want revision %d", ev, ok, want)
			}
			want++
		}
	}
	select {
	case <-q.ready:
	default:
		t.Fatal("no ready token after pushes")
	}
	for q.n < limit {
		if !q.push(&event{rev: next}) {
			t.Fatalf("push refused with %d queued (limit %d)", q.n, limit)
		}
		next++
	}
	if len(q.buf) != limit {
		t.Errorf("full queue's buffer is %d: want the limit %d", len(q.buf), limit)
	}
	if q.push(&event{rev: next}) {
		t.Fatalf("push past the limit of %d accepted", limit)
	}
	for want < next {
		ev, ok := q.pop()
		if !ok || ev.rev != want {
			t.Fatalf("pop = %v, %v; want revision %d", ev, ok, want)
		}
		want++
	}
	if ev, ok := q.pop(); ok {
		t.Fatalf("pop from an empty queue = %v", ev)
	}
	if q.buf != nil {
		t.Errorf("emptied queue keeps a buffer of %d (> %d)", len(q.buf), queueShrinkAbove)
	}
	if !q.push(&event{rev: next}) {
		t.Fatal("push after emptying refused")
	}
	if ev, ok := q.pop(); !ok || ev.rev != next {
		t.Fatalf("pop = %v, %v; want revision %d", ev, ok, next)
	}
}
