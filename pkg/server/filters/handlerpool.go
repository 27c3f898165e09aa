package filters

import (
	"sync/atomic"
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
// wait at once.
var handlerGoroutines = newHandlerPool(100*time.Millisecond, 256)

// handlerPool runs functions on goroutines it keeps while they are used.
type handlerPool struct {
	work    chan func() // unbuffered: a send succeeds only to a waiting goroutine
	idle    atomic.Int32
	idleFor time.Duration
	maxIdle int32
}

func newHandlerPool(idleFor time.Duration, maxIdle int32) *handlerPool {
	return &handlerPool{work: make(chan func()), idleFor: idleFor, maxIdle: maxIdle}
}

// goPooled runs f on a goroutine of the pool, or on a new one when none
// waits. f is the body of a go statement: it must recover its own panics,
// and leave nothing behind that the next function would see.
func (p *handlerPool) goPooled(f func()) {
	select {
	case p.work <- f:
	default:
		go p.serve(f)
	}
}

// serve runs f and then the functions sent to the pool, until none comes
// for idleFor or maxIdle goroutines already wait. A function that ends its
// goroutine (runtime.Goexit) ends serve with it.
func (p *handlerPool) serve(f func()) {
	var timer *time.Timer
	for {
		f()
		f = nil // nothing of the last request stays reachable from an idle goroutine
		if p.idle.Add(1) > p.maxIdle {
			p.idle.Add(-1)
			return
		}
		if timer == nil {
			timer = time.NewTimer(p.idleFor)
		} else {
			timer.Reset(p.idleFor)
		}
		select {
		case f = <-p.work:
			p.idle.Add(-1)
			timer.Stop()
		case <-timer.C:
			p.idle.Add(-1)
			return
		}
	}
}
