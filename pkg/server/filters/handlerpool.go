package filters

import (
	"sync"
	"time"
)

// The timeout filter runs each request's handler on a goroutine of its
// own. A new goroutine gets a small stack, which growStack then takes to
// the size a GET or an update needs, and the runtime frees that stack when
// the goroutine ends: per request a 32 KiB stack allocated, a stack copied
// and a stack freed (with the outer goroutine's, ~10% of kapi's CPU per
// consistent GET at c=32 on etcd). handlerGoroutines keeps the goroutines
// that ran a handler for the next ones, with their grown stacks; the
// runtime may still shrink an idle one's stack at a GC, after which
// growStack grows it again.
//
// A goroutine waits 100 ms for its next function and then ends (under
// load a goroutine's next request comes within microseconds), so an idle
// server keeps none, and tests that look for leaked goroutines after a
// server stops (goleak retries for ~0.4 s) do not see them; at most 256
// wait at once. The last goroutine to finish is the next to run (its
// stack is the likeliest to be still grown and in cache).
var handlerGoroutines = newHandlerPool(100*time.Millisecond, 256)

// handlerPool runs functions on goroutines it keeps while they are used.
type handlerPool struct {
	idleFor time.Duration
	maxIdle int

	mu   sync.Mutex
	idle []*pooledGoroutine // waiting, the last to finish last
}

// pooledGoroutine is a goroutine of the pool; work takes it its next
// function once it has been taken off the idle list.
type pooledGoroutine struct {
	work chan func() // buffered (1): the sender never waits
}

func newHandlerPool(idleFor time.Duration, maxIdle int) *handlerPool {
	return &handlerPool{idleFor: idleFor, maxIdle: maxIdle}
}

// goPooled runs f on a goroutine of the pool, or on a new one when none
// waits. f is the body of a go statement: it must recover its own panics,
// and leave nothing behind that the next function would see.
func (p *handlerPool) goPooled(f func()) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		g := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		g.work <- f
		return
	}
	p.mu.Unlock()
	go p.serve(f)
}

// serve runs f and then the functions sent to it, until none comes for
// idleFor or maxIdle goroutines already wait. A function that ends its
// goroutine (runtime.Goexit) ends serve with it (it was on no list).
func (p *handlerPool) serve(f func()) {
	g := &pooledGoroutine{work: make(chan func(), 1)}
	var timer *time.Timer
	for {
		f()
		f = nil // nothing of the last request stays reachable from an idle goroutine
		p.mu.Lock()
		if len(p.idle) >= p.maxIdle {
			p.mu.Unlock()
			return
		}
		p.idle = append(p.idle, g)
		p.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(p.idleFor)
		} else {
			timer.Reset(p.idleFor)
		}
		select {
		case f = <-g.work:
			timer.Stop()
		case <-timer.C:
			if p.leave(g) {
				return
			}
			f = <-g.work // taken off the list just now: its function is coming
		}
	}
}

// idleCount is the number of goroutines waiting.
func (p *handlerPool) idleCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

// leave takes g off the idle list; false if a sender already took it.
func (p *handlerPool) leave(g *pooledGoroutine) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, w := range p.idle {
		if w == g {
			n := copy(p.idle[i:], p.idle[i+1:])
			p.idle[i+n] = nil
			p.idle = p.idle[:i+n]
			return true
		}
	}
	return false
}
