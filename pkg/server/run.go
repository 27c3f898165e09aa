package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"
)

// PreparedServer is a server whose health and OpenAPI routes are installed;
// only it can Run.
type PreparedServer struct {
	*GenericServer
}

// SetOpenAPI makes s serve o at /openapi/v2 and /openapi/v3 once prepared.
func (s *GenericServer) SetOpenAPI(o *OpenAPI) { s.openAPI = o }

// PrepareRun prepares the delegates first (the innermost goes first), then
// installs OpenAPI, /healthz, /livez and, with the shutdown check appended,
// /readyz (lifecycle.md 6). Calling it twice does the work once.
func (s *GenericServer) PrepareRun() PreparedServer {
	s.prepareOnce.Do(func() {
		s.delegate.PrepareRun()
		if s.openAPI != nil {
			s.openAPI.install(s.handler.NonRESTMux)
		}
		if err := s.installHealth(); err != nil {
			// installHealth only fails on a programming error.
			panic(err)
		}
	})
	return PreparedServer{s}
}

// retryAfterShutdownTimeout bounds http.Server.Shutdown in retry-after mode
// (lifecycle.md 28): everything has already drained by then.
const retryAfterShutdownTimeout = 2 * time.Second

// Run serves until ctx is cancelled (SIGTERM), then carries out the
// graceful-termination protocol drawn in lifecycle_signals.go, and returns
// nil once the HTTP server has stopped. Requests in flight are not cut
// off by ctx: the HTTP server stops on its own schedule, after ctx.
//
// Run fails, returning at once, if the audit backend or serving cannot
// start, or if a pre-shutdown hook fails (lifecycle.md 34): then, without
// the drain, the HTTP server is closed (connections included, as the
// process exit that follows upstream would), the post-start hooks' context
// is cancelled and the audit backend is shut down.
//
// Either way Run returns only once every goroutine it started has
// returned: the lifecycle watchers, the HTTP server's and the post-start
// hooks (whose context is cancelled when the HTTP server is told to stop,
// lifecycle.md 9; a hook that ignores it holds Run up). Destroy runs last.
func (s PreparedServer) Run(ctx context.Context) error {
	sig := s.cfg.LifecycleSignals
	stopCh := ctx.Done()
	defer s.Destroy()

	// Every goroutine below belongs to r and is waited for (before
	// Destroy). r.abort ends the protocol early when Run fails; a clean
	// shutdown needs no abort, every goroutine has ended or is ending.
	r := newRunGroup()
	clean := false
	defer func() {
		if !clean {
			r.abort()
		}
		r.wg.Wait()
	}()

	// (b) MuxAndDiscoveryComplete once every registered signal fired.
	muxSignals := s.MuxAndDiscoveryCompleteSignals()
	r.goTracked(func() {
		for _, ch := range muxSignals {
			select {
			case <-ch:
			case <-stopCh:
				return
			case <-r.aborted:
				return
			}
		}
		sig.MuxAndDiscoveryComplete.Signal()
	})

	// (c) The shutdown delay: ShutdownInitiated at once, the delay after D.
	r.goTracked(func() {
		if !r.await(stopCh) {
			return
		}
		sig.ShutdownInitiated.Signal()
		if d := s.cfg.ShutdownDelayDuration; d > 0 {
			s.logger.Info("[graceful-termination] waiting for the shutdown delay", "duration", d)
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
			case <-r.aborted:
				return
			}
		}
		sig.AfterShutdownDelayDuration.Signal()
	})

	shutdownTimeout := s.cfg.RequestTimeout
	if s.cfg.ShutdownSendRetryAfter {
		shutdownTimeout = retryAfterShutdownTimeout
	}

	// When the HTTP server is told to stop: NotAcceptingNewRequest in default
	// mode, InFlightRequestsDrained in retry-after mode (lifecycle.md 21, 28).
	// An abort closes it instead (r.aborted).
	stopHTTPServerCh := make(chan struct{})
	r.goTracked(func() {
		stopAt := sig.NotAcceptingNewRequest.Signaled()
		if s.cfg.ShutdownSendRetryAfter {
			stopAt = sig.InFlightRequestsDrained.Signaled()
		}
		if r.await(stopAt) {
			close(stopHTTPServerCh)
		}
	})

	// (d) The audit backend runs until the drain, so no event of an
	// in-flight request is lost.
	if s.cfg.AuditBackend != nil {
		if err := s.cfg.AuditBackend.Run(sig.InFlightRequestsDrained.Signaled()); err != nil {
			r.abort()
			return fmt.Errorf("failed to run the audit backend: %w", err)
		}
	}
	abortAudit := func() {
		if s.cfg.AuditBackend != nil {
			s.cfg.AuditBackend.Shutdown()
		}
	}

	// (e)-(g) Serve, start post-start hooks, tell systemd.
	stoppedCh, listenerStoppedCh, err := s.nonBlockingRun(ctx, r, stopHTTPServerCh, shutdownTimeout)
	if err != nil {
		r.abort()
		abortAudit()
		return err
	}
	r.goTracked(func() {
		if r.await(listenerStoppedCh) {
			sig.HTTPServerStoppedListening.Signal()
		}
	})

	// NotAcceptingNewRequest once the delay elapsed and the pre-shutdown
	// hooks returned; never after an abort, which comes before the hooks'
	// signal.
	r.goTracked(func() {
		if !r.await(sig.AfterShutdownDelayDuration.Signaled()) || !r.await(sig.PreShutdownHooksStopped.Signaled()) || r.isAborted() {
			return
		}
		sig.NotAcceptingNewRequest.Signal()
	})

	// Drain: non-long-running requests, and watches when G > 0.
	nonLongRunningDrained := make(chan struct{})
	r.goTracked(func() {
		defer close(nonLongRunningDrained)
		if r.await(sig.NotAcceptingNewRequest.Signaled()) && s.cfg.NonLongRunningRequestWaitGroup != nil {
			s.cfg.NonLongRunningRequestWaitGroup.Wait()
		}
	})
	watchesDrained := make(chan struct{})
	r.goTracked(func() {
		defer close(watchesDrained)
		if !r.await(sig.NotAcceptingNewRequest.Signaled()) {
			return
		}
		if g := s.cfg.ShutdownWatchTerminationGracePeriod; g > 0 && s.cfg.WatchRequestWaitGroup != nil {
			s.cfg.WatchRequestWaitGroup.Wait(g)
		}
	})
	r.goTracked(func() {
		<-nonLongRunningDrained
		<-watchesDrained
		if !r.isAborted() {
			sig.InFlightRequestsDrained.Signal()
		}
	})

	s.logger.Debug("[graceful-termination] waiting for shutdown to be initiated")
	<-stopCh
	// Hooks start once ShutdownInitiated fired, so that signal always comes
	// first (lifecycle.md 19).
	<-sig.ShutdownInitiated.Signaled()

	// Pre-shutdown hooks run on this goroutine, concurrently with the delay.
	// On failure the abort comes before PreShutdownHooksStopped, so the
	// HTTP server is closed rather than drained.
	if err := s.runPreShutdownHooks(); err != nil {
		r.abort()
		sig.PreShutdownHooksStopped.Signal()
		abortAudit()
		return err
	}
	sig.PreShutdownHooksStopped.Signal()

	<-sig.InFlightRequestsDrained.Signaled()
	if s.cfg.AuditBackend != nil {
		s.cfg.AuditBackend.Shutdown()
		s.logger.Info("[graceful-termination] audit backend shutdown completed")
	}
	<-listenerStoppedCh
	<-stoppedCh
	s.logger.Info("[graceful-termination] apiserver is exiting")
	clean = true
	return nil
}

// NonBlockingRun starts serving (if the config has SecureServing), runs the
// post-start hooks and notifies systemd. stopCh stops the HTTP server,
// which then shuts down within shutdownTimeout. stoppedCh closes when
// Shutdown returned; listenerStoppedCh when the listener stopped. The
// post-start hooks are not waited for.
func (s PreparedServer) NonBlockingRun(stopCh <-chan struct{}, shutdownTimeout time.Duration) (stoppedCh, listenerStoppedCh <-chan struct{}, err error) {
	return s.nonBlockingRun(context.Background(), newRunGroup(), stopCh, shutdownTimeout)
}

// nonBlockingRun is NonBlockingRun with its goroutines in r: r.abort closes
// the HTTP server at once and cancels the hooks' context. The hooks'
// context carries the values of ctx, not its cancellation.
func (s PreparedServer) nonBlockingRun(ctx context.Context, r *runGroup, stopCh <-chan struct{}, shutdownTimeout time.Duration) (stoppedCh, listenerStoppedCh <-chan struct{}, err error) {
	if s.cfg.SecureServing != nil {
		stoppedCh, listenerStoppedCh, err = s.cfg.SecureServing.serve(s.handler, shutdownTimeout, stopCh, r, s.logger)
		if err != nil {
			return nil, nil, err
		}
	} else {
		st, ls := make(chan struct{}), make(chan struct{})
		r.goTracked(func() {
			r.await(stopCh)
			close(ls)
			close(st)
		})
		stoppedCh, listenerStoppedCh = st, ls
	}

	// Hooks see their context cancelled when the HTTP server is told to stop.
	hookCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.goTracked(func() {
		r.await(stopCh)
		cancel()
	})
	s.runPostStartHooks(hookCtx, r)

	if err := notifySystemd(); err != nil {
		s.logger.Warn("unable to notify systemd", "err", err)
	}
	return stoppedCh, listenerStoppedCh, nil
}

// runGroup owns the goroutines of one Run: it starts them, Run waits for
// them (wg), and can abort them.
type runGroup struct {
	wg        sync.WaitGroup
	aborted   chan struct{}
	abortOnce sync.Once
}

func newRunGroup() *runGroup { return &runGroup{aborted: make(chan struct{})} }

// goTracked runs f on a goroutine of the group (counted in wg).
func (r *runGroup) goTracked(f func()) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		f()
	}()
}

// await waits for ch; false if the run was aborted first (an abort wins
// over a ch that is also ready).
func (r *runGroup) await(ch <-chan struct{}) bool {
	select {
	case <-r.aborted:
		return false
	default:
	}
	select {
	case <-ch:
		return !r.isAborted()
	case <-r.aborted:
		return false
	}
}

func (r *runGroup) isAborted() bool {
	select {
	case <-r.aborted:
		return true
	default:
		return false
	}
}

// abort ends every wait of the group's goroutines. Idempotent.
func (r *runGroup) abort() { r.abortOnce.Do(func() { close(r.aborted) }) }

// notifySystemd sends READY=1 to $NOTIFY_SOCKET when it is set.
func notifySystemd() error {
	addr := os.Getenv("NOTIFY_SOCKET")
	if addr == "" {
		return nil
	}
	conn, err := net.Dial("unixgram", addr)
	if err != nil {
		return fmt.Errorf("dial %s: %w", addr, err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("READY=1")); err != nil {
		return errors.Join(fmt.Errorf("write READY=1: %w", err))
	}
	return nil
}
