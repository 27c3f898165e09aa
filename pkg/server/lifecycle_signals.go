package server

import (
	"log/slog"
	"sync"
)

/*
The graceful-termination protocol (spec/lifecycle.md §C–§E). D is
--shutdown-delay-duration, G is --shutdown-watch-termination-grace-period.

	Run's ctx cancelled (SIGTERM)
	   |
	   +--> ShutdownInitiated ............ /readyz fails from here on
	   |        |                        pre-shutdown hooks run
	   |        +-- D elapses --> AfterShutdownDelayDuration
	   |                                 |
	   |        PreShutdownHooksStopped -+
	   |                                 v
	   |                      NotAcceptingNewRequest
	   |                         |   the non-long-running wait group starts
	   |                         |   waiting (new requests get 503); watches
	   |                         |   are told to end when G > 0
	   |   default mode:         |   http.Server.Shutdown(T): listener closes
	   |   retry-after mode:     |   listener stays open, new requests get 429
	   |                         v
	   |                 InFlightRequestsDrained
	   |                         |   audit backend shuts down (flushes)
	   |   retry-after mode:     |   http.Server.Shutdown(2s)
	   |                         v
	   +----------------> HTTPServerStoppedListening -> Run returns nil

HasBeenReady (first 200 from /readyz) and MuxAndDiscoveryComplete (every
server of the chain has installed its routes) are independent of shutdown.
*/

// Signal is a one-shot, idempotent event: it fires at most once and is never
// reset.
type Signal interface {
	// Signal fires the event; later calls do nothing.
	Signal()
	// Signaled returns a channel closed once the event has fired.
	Signaled() <-chan struct{}
	// Name is the event's name as logged.
	Name() string
}

type namedSignal struct {
	name   string
	once   sync.Once
	ch     chan struct{}
	notify func(name string)
}

func (s *namedSignal) Signal() {
	s.once.Do(func() {
		if s.notify != nil {
			s.notify(s.name)
		}
		close(s.ch)
	})
}

func (s *namedSignal) Signaled() <-chan struct{} { return s.ch }
func (s *namedSignal) Name() string              { return s.name }

// LifecycleSignals are the events of one process's server chain; every
// server of the chain shares the same set.
type LifecycleSignals struct {
	ShutdownInitiated          Signal
	AfterShutdownDelayDuration Signal
	PreShutdownHooksStopped    Signal
	NotAcceptingNewRequest     Signal
	InFlightRequestsDrained    Signal
	HTTPServerStoppedListening Signal
	HasBeenReady               Signal
	MuxAndDiscoveryComplete    Signal
}

// NewLifecycleSignals returns unfired signals. Each is logged as
// "[graceful-termination] shutdown event" (or "lifecycle event" for the two
// startup events) when it fires, and onSignal (may be nil) is called with its
// name before its channel closes, which lets tests record the order.
func NewLifecycleSignals(logger *slog.Logger, onSignal func(name string)) LifecycleSignals {
	if logger == nil {
		logger = slog.Default()
	}
	mk := func(name string, shutdown bool) Signal {
		return &namedSignal{name: name, ch: make(chan struct{}), notify: func(n string) {
			if shutdown {
				logger.Info("[graceful-termination] shutdown event", "name", n)
			} else {
				logger.Info("lifecycle event", "name", n)
			}
			if onSignal != nil {
				onSignal(n)
			}
		}}
	}
	return LifecycleSignals{
		ShutdownInitiated:          mk("ShutdownInitiated", true),
		AfterShutdownDelayDuration: mk("AfterShutdownDelayDuration", true),
		PreShutdownHooksStopped:    mk("PreShutdownHooksStopped", true),
		NotAcceptingNewRequest:     mk("NotAcceptingNewRequest", true),
		InFlightRequestsDrained:    mk("InFlightRequestsDrained", true),
		HTTPServerStoppedListening: mk("HTTPServerStoppedListening", true),
		HasBeenReady:               mk("HasBeenReady", false),
		MuxAndDiscoveryComplete:    mk("MuxAndDiscoveryComplete", false),
	}
}
