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
