package startheap

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// gcPercent reads the GC percentage (SetGCPercent is its only reader).
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// isEngaged reads the regime's state under its lock.
func isEngaged() bool {
	mu.Lock()
	defer mu.Unlock()
	return engaged
}

// setup gives each test a known percentage and no regime, and puts the
// test process's own percentage back afterwards.
func setup(t *testing.T, gogc string) {
	t.Setenv("GOGC", gogc)
	orig := debug.SetGCPercent(100)
	t.Cleanup(func() {
		restore()
		debug.SetGCPercent(orig)
	})
	restore()
	debug.SetGCPercent(100)
}

func TestReadyRestoresThePercentage(t *testing.T) {
	setup(t, "")
	debug.SetGCPercent(137)
	Engage()
	if got := gcPercent(); got != startPercent {
		t.Fatalf("engaged: GC percent %d, want %d", got, startPercent)
	}
	Engage() // a second Engage must not take 800 as the previous value
	Ready()
	if got := gcPercent(); got != 137 {
		t.Fatalf("after Ready: GC percent %d, want the previous 137", got)
	}
	Ready() // no regime any more: nothing changes
	if got := gcPercent(); got != 137 || isEngaged() {
		t.Fatalf("after a second Ready: GC percent %d, engaged %v; want 137, false", got, isEngaged())
	}
}

func TestFirstCollectionRestoresThePercentage(t *testing.T) {
	setup(t, "")
	Engage()
	if !isEngaged() {
		t.Fatal("not engaged")
	}
	deadline := time.Now().Add(10 * time.Second)
	for isEngaged() {
		if time.Now().After(deadline) {
			t.Fatal("still engaged 10s after collections")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if got := gcPercent(); got != 100 {
		t.Fatalf("after the first collection: GC percent %d, want 100", got)
	}
}

func TestGOGCInTheEnvironmentIsLeftAlone(t *testing.T) {
	setup(t, "150")
	debug.SetGCPercent(150)
	Engage()
	if got := gcPercent(); got != 150 || isEngaged() {
		t.Fatalf("GOGC=150 set: GC percent %d, engaged %v; want 150, false", got, isEngaged())
	}
}
