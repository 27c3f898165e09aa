// Package promdefer defers the Prometheus registrations that package
// initialisation makes into the default registry until the binary's main
// runs.
//
// The embedded etcd's packages register about 150 collectors into
// prometheus.DefaultRegisterer from their init functions, and
// (*prometheus.Registry).Register describes each collector on a goroutine
// of its own. During package initialisation the main goroutine is locked
// to the main thread (runtime.main), so each of those goroutines is a
// hand-off of the processor to another thread and back: two futex wakes
// and two sleeps per registration, 2–5 ms of a start's wall clock on the
// 2-core machine of docs/performance.md, for metrics kapi only serves in
// `kapi etcd` mode.
//
// Importing this package installs a recording Registerer as
// prometheus.DefaultRegisterer; its init runs before any go.etcd.io
// package's (Go initialises the ready package with the smallest import
// path first, and this one needs only client_golang). MustRegister calls
// are recorded; Register and Unregister of anything not recorded go to the
// real registry at once, so their answers stay exact. Flush, which main
// calls first, puts the real registry back and registers what was
// recorded, in order, where goroutines are cheap again; a registration
// that fails panics there, as MustRegister would have at init.
//
// Only the binary imports it (cmd/kapi): a library does not replace its
// host's default registry.
package promdefer

import (
	"reflect"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// recorder is the DefaultRegisterer between this package's init and
// Flush.
type recorder struct {
	real prometheus.Registerer

	mu      sync.Mutex
	flushed bool
	pending []prometheus.Collector
}

var (
	installed *recorder
	flushOnce sync.Once
)

func init() { Install() }

// Install replaces prometheus.DefaultRegisterer with a recorder unless
// one is installed already. It is exported for tests; the package's init
// calls it.
func Install() {
	if installed != nil {
		return
	}
	installed = &recorder{real: prometheus.DefaultRegisterer}
	prometheus.DefaultRegisterer = installed
}

// Pending reports how many registrations are recorded and not yet
// flushed.
func Pending() int {
	if installed == nil {
		return 0
	}
	installed.mu.Lock()
	defer installed.mu.Unlock()
	return len(installed.pending)
}

// Flush restores the real default registerer and registers into it every
// collector recorded since init, in the order they came. It panics, as
// MustRegister does, when one of them cannot be registered. Calls after
// the first do nothing.
func Flush() {
	flushOnce.Do(func() {
		if installed == nil {
			return
		}
		if prometheus.DefaultRegisterer == prometheus.Registerer(installed) {
			prometheus.DefaultRegisterer = installed.real
		}
		installed.flush()
	})
}

// flush registers the recorded collectors into the real registry; from
// then on the recorder passes everything through.
func (r *recorder) flush() {
	r.mu.Lock()
	pending := r.pending
	r.pending, r.flushed = nil, true
	r.mu.Unlock()
	r.real.MustRegister(pending...)
}

// Register goes to the real registry: its caller acts on the error
// (etcd's v2store does), which only the real registry can give.
func (r *recorder) Register(c prometheus.Collector) error {
	return r.real.Register(c)
}

// MustRegister records the collectors until Flush; after it, they go to
// the real registry.
func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	r.mu.Lock()
	if !r.flushed {
		r.pending = append(r.pending, cs...)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.real.MustRegister(cs...)
}

// Unregister drops a recorded collector, or asks the real registry.
func (r *recorder) Unregister(c prometheus.Collector) bool {
	r.mu.Lock()
	for i, p := range r.pending {
		// (== on a collector of an incomparable type would panic.)
		if reflect.TypeOf(p) == reflect.TypeOf(c) && reflect.TypeOf(c).Comparable() && p == c {
			r.pending = append(r.pending[:i], r.pending[i+1:]...)
			r.mu.Unlock()
			return true
		}
	}
	r.mu.Unlock()
	return r.real.Unregister(c)
}
