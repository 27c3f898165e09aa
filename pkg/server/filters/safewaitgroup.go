package filters

import (
	"errors"
	"sync"
)

// ErrWaitGroupClosed is returned by SafeWaitGroup.Add once Wait has begun.
var ErrWaitGroupClosed = errors.New("add with positive delta after Wait is forbidden")

// SafeWaitGroup counts in-flight requests like a sync.WaitGroup, except
// that Add with a positive delta fails (instead of racing) once Wait has
// begun, so the drain cannot be extended forever by new requests. The zero
// value is ready to use; it must not be copied.
type SafeWaitGroup struct {
	mu      sync.Mutex
	n       int
	waiting bool
	drained chan struct{} // created by Wait, closed when n reaches 0

	// Generations, for Barrier: Enter counts a request in the current
	// generation, Barrier starts a new one and waits for the older ones
	// to empty.
	gen      uint64
	live     map[uint64]int
	barriers []barrier
}

type barrier struct {
	gen  uint64 // the last generation the barrier waits for
	done chan struct{}
}

// Add adds delta. A positive delta after Wait began returns
// ErrWaitGroupClosed and changes nothing. A negative count panics.
func (g *SafeWaitGroup) Add(delta int) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if delta > 0 && g.waiting {
		return ErrWaitGroupClosed
	}
	g.n += delta
	if g.n < 0 {
		panic("filters: negative SafeWaitGroup counter")
	}
	if g.waiting && g.n == 0 {
		g.closeDrainedLocked()
	}
	return nil
}

// Done decrements the counter.
func (g *SafeWaitGroup) Done() { _ = g.Add(-1) }

// Count returns the current counter.
func (g *SafeWaitGroup) Count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}

// Wait forbids further Adds and blocks until the counter is zero. It may be
// called more than once and from several goroutines.
func (g *SafeWaitGroup) Wait() {
	<-g.StartWait()
}

// StartWait forbids further Adds and returns a channel closed when the
// counter reaches zero, without blocking.
func (g *SafeWaitGroup) StartWait() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.waiting {
		g.waiting = true
		g.drained = make(chan struct{})
		if g.n == 0 {
			g.closeDrainedLocked()
		}
	}
	return g.drained
}

func (g *SafeWaitGroup) closeDrainedLocked() {
	select {
	case <-g.drained:
	default:
		close(g.drained)
	}
}

// Enter counts one request, like Add(1), and returns the generation to
// give back to Leave.
func (g *SafeWaitGroup) Enter() (uint64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.waiting {
		return 0, ErrWaitGroupClosed
	}
	g.n++
	if g.live == nil {
		g.live = map[uint64]int{}
	}
	g.live[g.gen]++
	return g.gen, nil
}

// Leave ends a request counted by Enter.
func (g *SafeWaitGroup) Leave(gen uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.live[gen] <= 0 {
		panic("filters: SafeWaitGroup.Leave without Enter")
	}
	if g.live[gen]--; g.live[gen] == 0 {
		delete(g.live, gen)
	}
	g.n--
	if g.waiting && g.n == 0 {
		g.closeDrainedLocked()
	}
	kept := g.barriers[:0]
	for _, b := range g.barriers {
		if g.liveUpToLocked(b.gen) {
			kept = append(kept, b)
		} else {
			close(b.done)
		}
	}
	clear(g.barriers[len(kept):])
	g.barriers = kept
}

// Barrier returns a channel closed once every request that entered before
// the call has left; requests entering later do not hold it up, so it
// ends under steady traffic (unlike Wait, it does not refuse new
// requests). kapitest's Reset uses it: a write admitted before storage
// was reset has landed once the barrier is passed.
func (g *SafeWaitGroup) Barrier() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := barrier{gen: g.gen, done: make(chan struct{})}
	g.gen++
	if g.liveUpToLocked(b.gen) {
		g.barriers = append(g.barriers, b)
	} else {
		close(b.done)
	}
	return b.done
}

// liveUpToLocked reports whether a request of generation gen or older is
// in flight.
func (g *SafeWaitGroup) liveUpToLocked(gen uint64) bool {
	for k := range g.live {
		if k <= gen {
			return true
		}
	}
	return false
}
