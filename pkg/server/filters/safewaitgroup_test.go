package filters

import (
	"testing"
	"time"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// A barrier waits for the requests that entered before it, and only for
// those: a later request does not hold it up.
func TestSafeWaitGroupBarrier(t *testing.T) {
	var g SafeWaitGroup
	if !closed(g.Barrier()) {
		t.Fatal("barrier with nothing in flight is not passed at once")
	}
	a, _ := g.Enter()
	b, _ := g.Enter()
	first := g.Barrier()
	c, _ := g.Enter() // after the barrier
	if closed(first) {
		t.Fatal("barrier passed with two older requests in flight")
	}
	g.Leave(a)
	if closed(first) {
		t.Fatal("barrier passed with one older request in flight")
	}
	second := g.Barrier()
	g.Leave(b)
	select {
	case <-first:
	case <-time.After(5 * time.Second):
		t.Fatal("barrier not passed after the older requests left, with a newer one in flight")
	}
	if closed(second) {
		t.Fatal("second barrier passed while a request entered before it is in flight")
	}
	g.Leave(c)
	if !closed(second) {
		t.Fatal("second barrier not passed once every older request left")
	}
	if n := g.Count(); n != 0 {
		t.Fatalf("count %d after every request left, want 0", n)
	}
}

// Enter and Leave count for the shutdown drain like Add and Done.
func TestSafeWaitGroupEnterCountsForWait(t *testing.T) {
	var g SafeWaitGroup
	gen, err := g.Enter()
	if err != nil {
		t.Fatal(err)
	}
	drained := g.StartWait()
	if _, err := g.Enter(); err != ErrWaitGroupClosed {
		t.Fatalf("Enter after Wait began: %v, want ErrWaitGroupClosed", err)
	}
	if closed(drained) {
		t.Fatal("drained with a request in flight")
	}
	g.Leave(gen)
	if !closed(drained) {
		t.Fatal("not drained after the last request left")
	}
}
