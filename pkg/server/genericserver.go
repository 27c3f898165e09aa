package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"sync"

	"k8s.io/utils/clock"

	"github.com/kapi-dev/kapi/pkg/server/healthz"
)

// DelegationTarget is what a server delegates unmatched requests to: the
// next server of the chain, or the empty delegate at its end. All methods
// are safe to call more than once.
type DelegationTarget interface {
	// UnprotectedHandler serves the target's routes without filters.
	UnprotectedHandler() http.Handler
	// PostStartHooks and PreShutdownHooks are collected by the head.
	PostStartHooks() map[string]postStartHookEntry
	PreShutdownHooks() map[string]preShutdownHookEntry
	// HealthzChecks are copied by the server in front (health.md 26).
	HealthzChecks() []healthz.HealthChecker
	// ListedPaths is the target's part of the index at /.
	ListedPaths() []string
	// NextDelegate is the target's own delegate, or nil.
	NextDelegate() DelegationTarget
	// PrepareRun prepares the target (recursively).
	PrepareRun() PreparedServer
	// MuxAndDiscoveryCompleteSignals are the signals the target fires once
	// its routes are installed; the head waits for all of them.
	MuxAndDiscoveryCompleteSignals() map[string]<-chan struct{}
	// Destroy releases the target's resources (and its delegates').
	Destroy()
}

// GenericServer is one API server of the chain.
type GenericServer struct {
	name     string
	logger   *slog.Logger
	cfg      CompletedConfig
	delegate DelegationTarget
	handler  *APIServerHandler

	hookLock               sync.Mutex
	postStartHooks         map[string]postStartHookEntry
	postStartHooksCalled   bool
	preShutdownHooks       map[string]preShutdownHookEntry
	preShutdownHooksCalled bool

	// postStartHooksDone is closed once every hook the server ran
	// returned nil (see PostStartHooksFinished).
	postStartHooksDone chan struct{}
	// hooksRunning counts the post-start hooks this server started that
	// have not returned; Destroy waits for it (see Destroy). Its Adds are
	// made under hookLock while destroying is false.
	hooksRunning sync.WaitGroup
	// destroying is set (under hookLock) when Destroy begins: hooks are
	// no longer started after it.
	destroying bool
	// cancelHooks cancels the context of the post-start hooks this
	// server started (nil until it started them): Destroy calls it, so
	// hooks waiting on their context end even if the server was never
	// told to stop. Set and read under hookLock.
	cancelHooks context.CancelFunc

	healthLock         sync.Mutex
	healthzChecks      []healthz.HealthChecker
	livezChecks        []healthz.HealthChecker
	readyzChecks       []healthz.HealthChecker
	healthzInstalled   bool
	livezInstalled     bool
	readyzInstalled    bool
	livezClock         clock.Clock
	muxCompleteSignals map[string]<-chan struct{}

	openAPI *OpenAPI

	destroyOnce sync.Once
	destroyFns  []func()
	prepareOnce sync.Once
}

// New builds a server named name (kube-aggregator, kube-apiserver,
// apiextensions-apiserver) in front of delegate. The delegate's hooks,
// health checks and mux signals are collected here, so the head of the
// chain holds them all.
func (c CompletedConfig) New(name string, delegate DelegationTarget) (*GenericServer, error) {
	if delegate == nil {
		return nil, errors.New("delegate must not be nil; use NewEmptyDelegate")
	}
	s := &GenericServer{
		name:               name,
		logger:             c.Logger.With("server", name),
		cfg:                c,
		delegate:           delegate,
		postStartHooks:     map[string]postStartHookEntry{},
		postStartHooksDone: make(chan struct{}),
		preShutdownHooks:   map[string]preShutdownHookEntry{},
		healthzChecks:      append([]healthz.HealthChecker(nil), c.HealthzChecks...),
		livezChecks:        append([]healthz.HealthChecker(nil), c.LivezChecks...),
		readyzChecks:       append([]healthz.HealthChecker(nil), c.ReadyzChecks...),
		livezClock:         clock.RealClock{},
		muxCompleteSignals: map[string]<-chan struct{}{},
	}
	s.handler = newAPIServerHandler(name, delegate.UnprotectedHandler())
	chain := http.Handler(s.handler.Director)
	if c.BuildHandlerChainFunc != nil {
		chain = c.BuildHandlerChainFunc(s.handler.Director, c.Config)
	}
	s.handler.FullHandlerChain = chain

	for k, v := range delegate.PostStartHooks() {
		s.postStartHooks[k] = v
	}
	for k, v := range delegate.PreShutdownHooks() {
		s.preShutdownHooks[k] = v
	}
	for name, hook := range c.PostStartHooks {
		if err := s.AddPostStartHook(name, hook); err != nil {
			return nil, err
		}
	}
	for k, v := range delegate.MuxAndDiscoveryCompleteSignals() {
		if err := s.RegisterMuxAndDiscoveryCompleteSignal(k, v); err != nil {
			return nil, err
		}
	}
	// Copy the delegate's checks that are not config-level checks here
	// (health.md 26); they land on all three endpoints, with no livez grace
	// (health.md 31, an upstream quirk kept on purpose).
	for _, dc := range delegate.HealthzChecks() {
		if hasCheck(c.HealthzChecks, dc.Name()) {
			continue
		}
		if err := s.AddHealthChecks(dc); err != nil {
			return nil, err
		}
	}
	s.installBaseRoutes()
	return s, nil
}

func hasCheck(checks []healthz.HealthChecker, name string) bool {
	for _, c := range checks {
		if c.Name() == name {
			return true
		}
	}
	return false
}

// Name is the server's name.
func (s *GenericServer) Name() string { return s.name }

// Handler is the server's handler: the filtered chain in front of its
// routes. Only the head's is served.
func (s *GenericServer) Handler() *APIServerHandler { return s.handler }

// UnprotectedHandler is the director, without filters.
func (s *GenericServer) UnprotectedHandler() http.Handler { return s.handler.Director }

// PostStartHooks returns the server's hooks (its own and its delegates').
func (s *GenericServer) PostStartHooks() map[string]postStartHookEntry {
	s.hookLock.Lock()
	defer s.hookLock.Unlock()
	out := make(map[string]postStartHookEntry, len(s.postStartHooks))
	for k, v := range s.postStartHooks {
		out[k] = v
	}
	return out
}

// PreShutdownHooks returns the server's pre-shutdown hooks.
func (s *GenericServer) PreShutdownHooks() map[string]preShutdownHookEntry {
	s.hookLock.Lock()
	defer s.hookLock.Unlock()
	out := make(map[string]preShutdownHookEntry, len(s.preShutdownHooks))
	for k, v := range s.preShutdownHooks {
		out[k] = v
	}
	return out
}

// HealthzChecks returns the checks of /healthz.
func (s *GenericServer) HealthzChecks() []healthz.HealthChecker {
	s.healthLock.Lock()
	defer s.healthLock.Unlock()
	return append([]healthz.HealthChecker(nil), s.healthzChecks...)
}

// ListedPaths is the sorted union of this server's REST roots and listed
// paths and its delegates' (serving.md 36).
func (s *GenericServer) ListedPaths() []string {
	set := map[string]struct{}{}
	for _, p := range s.handler.RESTRoots() {
		set[p] = struct{}{}
	}
	for _, p := range s.handler.NonRESTMux.ListedPaths() {
		set[p] = struct{}{}
	}
	for _, p := range s.delegate.ListedPaths() {
		set[p] = struct{}{}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// NextDelegate returns the server's delegate.
func (s *GenericServer) NextDelegate() DelegationTarget { return s.delegate }

// MuxAndDiscoveryCompleteSignals returns the signals collected here.
func (s *GenericServer) MuxAndDiscoveryCompleteSignals() map[string]<-chan struct{} {
	s.healthLock.Lock()
	defer s.healthLock.Unlock()
	out := make(map[string]<-chan struct{}, len(s.muxCompleteSignals))
	for k, v := range s.muxCompleteSignals {
		out[k] = v
	}
	return out
}

// RegisterMuxAndDiscoveryCompleteSignal adds a signal that must fire before
// MuxAndDiscoveryComplete (lifecycle.md 7b).
func (s *GenericServer) RegisterMuxAndDiscoveryCompleteSignal(name string, signal <-chan struct{}) error {
	s.healthLock.Lock()
	defer s.healthLock.Unlock()
	if _, exists := s.muxCompleteSignals[name]; exists {
		return fmt.Errorf("%s already registered", name)
	}
	s.muxCompleteSignals[name] = signal
	return nil
}

// AddDestroyFunc registers fn to run once when the server is destroyed.
func (s *GenericServer) AddDestroyFunc(fn func()) {
	s.hookLock.Lock()
	defer s.hookLock.Unlock()
	s.destroyFns = append(s.destroyFns, fn)
}

// Destroy runs the destroy functions of this server, then its delegates'
// (lifecycle.md 7a). Idempotent.
//
// It first cancels the context of the post-start hooks this server
// started and waits for them to return (Run has already waited for them;
// after NonBlockingRun the caller's stop channel cancels it too, and a
// caller that destroys a server it never told to stop does not hang on a
// hook waiting for its context), and no hook starts after it began. A
// destroy function can therefore tell from state its hook set whether the
// hook ran (the controllers' "started, so wait for it to end"): a hook
// still starting when a destroy function read that state would start its
// work on destroyed storage, and its WaitGroup.Add would race the destroy
// function's Wait.
func (s *GenericServer) Destroy() {
	s.destroyOnce.Do(func() {
		s.hookLock.Lock()
		s.destroying = true
		fns := s.destroyFns
		if s.cancelHooks != nil {
			s.cancelHooks()
		}
		s.hookLock.Unlock()
		s.hooksRunning.Wait()
		for i := len(fns) - 1; i >= 0; i-- {
			fns[i]()
		}
		s.delegate.Destroy()
	})
}

// LifecycleSignals returns the chain's signals.
func (s *GenericServer) LifecycleSignals() LifecycleSignals { return s.cfg.LifecycleSignals }

// emptyDelegate ends the chain: it routes nothing and sends everything to
// its handler (the not-found handler).
type emptyDelegate struct {
	handler http.Handler
}

// NewEmptyDelegate returns the end of the chain, answering with handler.
func NewEmptyDelegate(handler http.Handler) DelegationTarget {
	return emptyDelegate{handler: handler}
}

func (d emptyDelegate) UnprotectedHandler() http.Handler                         { return d.handler }
func (emptyDelegate) PostStartHooks() map[string]postStartHookEntry              { return nil }
func (emptyDelegate) PreShutdownHooks() map[string]preShutdownHookEntry          { return nil }
func (emptyDelegate) HealthzChecks() []healthz.HealthChecker                     { return nil }
func (emptyDelegate) ListedPaths() []string                                      { return nil }
func (emptyDelegate) NextDelegate() DelegationTarget                             { return nil }
func (d emptyDelegate) PrepareRun() PreparedServer                               { return PreparedServer{} }
func (emptyDelegate) MuxAndDiscoveryCompleteSignals() map[string]<-chan struct{} { return nil }
func (emptyDelegate) Destroy()                                                   {}

var _ DelegationTarget = (*GenericServer)(nil)
