// Package startheap spares the kapi binary's start the garbage collections
// of a fresh process's small heap.
//
// A Go process starts with a 4 MiB heap goal: the kapi binary's package
// initialisation (~5 MB allocated) and its start on the memory backend
// (~25 MB allocated in all, ~10 MB live once ready) run four collections
// before the server is ready, about a fifth of the start's CPU
// (docs/performance-history.md, "Session 16: start → ready on memory"). Engage
// raises the GC percentage so that the first collection comes at a
// heap of about 32 MiB (as the Go compiler does for its own start,
// cmd/compile's AdjustStartingHeap); the previous percentage comes back
// at that first collection, or when the server is ready (Ready), whichever
// is first. So the start allocates at most ~32 MiB before it collects, and
// from then on the process collects as it would have.
//
// Only the binary engages it (package startheap/engage, imported by
// cmd/kapi alone): a library does not change its host process's GC
// settings. A GOGC set in the environment is left alone.
package startheap

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
)

// startPercent makes the first heap goal 8 × the runtime's 4 MiB minimum.
const startPercent = 800

var (
	mu       sync.Mutex
	engaged  bool // Engage raised the percentage and it is not restored yet
	previous int  // the percentage before Engage
)

// Engage raises the GC percentage for the start, unless GOGC is set in
// the environment or it is engaged already. It is meant to run once, as
// early in the process as it can (package engage's init).
func Engage() {
	if os.Getenv("GOGC") != "" {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	if engaged {
		return
	}
	previous = debug.SetGCPercent(startPercent)
	engaged = true
	// The first collection, whenever it comes, ends the start's regime:
	// the cleanup of an object nothing references runs after it.
	// (32 bytes: above the tiny allocator's 16, whose blocks are shared.)
	runtime.AddCleanup(new([32]byte), func(struct{}) { restore() }, struct{}{})
}

// Ready tells that the server is ready: the start's regime ends, and what
// the start allocated is collected and its pages returned to the system
// on a goroutine of its own. It does nothing unless the regime is
// engaged and not yet ended; it is safe to call more than once and from
// any goroutine.
func Ready() {
	if restore() {
		go debug.FreeOSMemory()
	}
}

// restore puts the previous GC percentage back and reports whether it did
// (false when not engaged or restored already).
func restore() bool {
	mu.Lock()
	defer mu.Unlock()
	if !engaged {
		return false
	}
	engaged = false
	debug.SetGCPercent(previous)
	return true
}
