package filters

import (
	"bytes"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// goroutineID is the calling goroutine's number, from its stack header.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := bytes.Fields(buf)
	if len(f) < 2 {
		return ""
	}
	return string(f[1])
}

// A function sent while a pool goroutine waits runs on that goroutine; one
// sent while none waits (or after the idle ones ended) gets a new one; an
// idle goroutine ends after idleFor, and no more than maxIdle wait.
func TestHandlerPool(t *testing.T) {
	p := newHandlerPool(200*time.Millisecond, 1)
	ran := make(chan string)
	run := func() { p.goPooled(func() { ran <- goroutineID() }) }
	waitIdle := func(want int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for p.idleCount() != want {
			if time.Now().After(deadline) {
				t.Fatalf("idle goroutines: got %d, want %d", p.idleCount(), want)
			}
			time.Sleep(time.Millisecond)
		}
	}

	run()
	first := <-ran
	waitIdle(1)
	run()
	if second := <-ran; second != first {
		t.Errorf("second function ran on goroutine %s, want the idle %s", second, first)
	}

	// Two at once: the idle goroutine takes one, a new goroutine the
	// other; afterwards only one (maxIdle) waits.
	block := make(chan struct{})
	waitIdle(1)
	for range 2 {
		p.goPooled(func() { ran <- goroutineID(); <-block })
	}
	a, b := <-ran, <-ran
	if a == b {
		t.Errorf("two concurrent functions ran on one goroutine %s", a)
	}
	close(block)
	waitIdle(1)
	time.Sleep(50 * time.Millisecond)
	if n := p.idleCount(); n != 1 {
		t.Errorf("idle goroutines after two ended: got %d, want 1 (maxIdle)", n)
	}

	// The idle one ends after idleFor; the next function gets a new one.
	waitIdle(0)
	run()
	if third := <-ran; third == first || third == a || third == b {
		t.Errorf("function after the idle period ran on the old goroutine %s", third)
	}
}

// A function that ends its goroutine ends only its own pool goroutine:
// later functions still run.
func TestHandlerPoolGoexit(t *testing.T) {
	p := newHandlerPool(time.Second, 4)
	done := make(chan struct{})
	p.goPooled(func() { defer close(done); runtime.Goexit() })
	<-done
	ran := make(chan struct{})
	p.goPooled(func() { close(ran) })
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("no function ran after a Goexit")
	}
}

// Every function runs exactly once while goroutines keep ending at their
// idle timeout as functions are handed to them (a 1 ms idleFor against
// senders that pause about as long).
func TestHandlerPoolIdleRace(t *testing.T) {
	p := newHandlerPool(time.Millisecond, 8)
	const senders, each = 4, 200
	var wg sync.WaitGroup
	var ran atomic.Int64
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				done := make(chan struct{})
				p.goPooled(func() { ran.Add(1); close(done) })
				<-done
				if (i+s)%3 == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	if got := ran.Load(); got != senders*each {
		t.Errorf("%d functions ran, want %d", got, senders*each)
	}
}
