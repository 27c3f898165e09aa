package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
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

// Run serves until stopCh closes, then carries out the graceful-termination
// protocol drawn in lifecycle_signals.go, and returns nil once the HTTP
// server has stopped. It returns at once with an error if serving cannot
// start, or if a pre-shutdown hook fails (lifecycle.md 34).
func (s PreparedServer) Run(stopCh <-chan struct{}) error {
	sig := s.cfg.LifecycleSignals
	defer s.Destroy()

	// (b) MuxAndDiscoveryComplete once every registered signal fired.
	muxSignals := s.MuxAndDiscoveryCompleteSignals()
	go func() {
		for _, ch := range muxSignals {
			select {
			case <-ch:
			case <-stopCh:
				return
			}
		}
		sig.MuxAndDiscoveryComplete.Signal()
	}()

	// (c) The shutdown delay: ShutdownInitiated at once, the delay after D.
	go func() {
		defer sig.AfterShutdownDelayDuration.Signal()
		<-stopCh
		sig.ShutdownInitiated.Signal()
		if d := s.cfg.ShutdownDelayDuration; d > 0 {
			s.logger.Info("[graceful-termination] waiting for the shutdown delay", "duration", d)
			time.Sleep(d)
		}
	}()

	shutdownTimeout := s.cfg.RequestTimeout
	if s.cfg.ShutdownSendRetryAfter {
		shutdownTimeout = retryAfterShutdownTimeout
	}

	// When the HTTP server is told to stop: NotAcceptingNewRequest in default
	// mode, InFlightRequestsDrained in retry-after mode (lifecycle.md 21, 28).
	stopHTTPServerCh := make(chan struct{})
	go func() {
		defer close(stopHTTPServerCh)
		if s.cfg.ShutdownSendRetryAfter {
			<-sig.InFlightRequestsDrained.Signaled()
		} else {
			<-sig.NotAcceptingNewRequest.Signaled()
		}
	}()

	// (d) The audit backend runs until the drain, so no event of an
	// in-flight request is lost.
	if s.cfg.AuditBackend != nil {
		if err := s.cfg.AuditBackend.Run(sig.InFlightRequestsDrained.Signaled()); err != nil {
			return fmt.Errorf("failed to run the audit backend: %w", err)
		}
	}

	// (e)-(g) Serve, start post-start hooks, tell systemd.
	stoppedCh, listenerStoppedCh, err := s.NonBlockingRun(stopHTTPServerCh, shutdownTimeout)
	if err != nil {
		return err
	}
	go func() {
		<-listenerStoppedCh
		sig.HTTPServerStoppedListening.Signal()
	}()

	// NotAcceptingNewRequest once the delay elapsed and the pre-shutdown
	// hooks returned.
	go func() {
		defer sig.NotAcceptingNewRequest.Signal()
		<-sig.AfterShutdownDelayDuration.Signaled()
		<-sig.PreShutdownHooksStopped.Signaled()
	}()

	// Drain: non-long-running requests, and watches when G > 0.
	nonLongRunningDrained := make(chan struct{})
	go func() {
		defer close(nonLongRunningDrained)
		<-sig.NotAcceptingNewRequest.Signaled()
		if s.cfg.NonLongRunningRequestWaitGroup != nil {
			s.cfg.NonLongRunningRequestWaitGroup.Wait()
		}
	}()
	watchesDrained := make(chan struct{})
	go func() {
		defer close(watchesDrained)
		<-sig.NotAcceptingNewRequest.Signaled()
		if g := s.cfg.ShutdownWatchTerminationGracePeriod; g > 0 && s.cfg.WatchRequestWaitGroup != nil {
			s.cfg.WatchRequestWaitGroup.Wait(g)
		}
	}()
	go func() {
		defer sig.InFlightRequestsDrained.Signal()
		<-nonLongRunningDrained
		<-watchesDrained
	}()

	s.logger.Debug("[graceful-termination] waiting for shutdown to be initiated")
	<-stopCh
	// Hooks start once ShutdownInitiated fired, so that signal always comes
	// first (lifecycle.md 19).
	<-sig.ShutdownInitiated.Signaled()

	// Pre-shutdown hooks run on this goroutine, concurrently with the delay.
	err = func() error {
		defer sig.PreShutdownHooksStopped.Signal()
		return s.runPreShutdownHooks()
	}()
	if err != nil {
		return err
	}

	<-sig.InFlightRequestsDrained.Signaled()
	if s.cfg.AuditBackend != nil {
		s.cfg.AuditBackend.Shutdown()
		s.logger.Info("[graceful-termination] audit backend shutdown completed")
	}
	<-listenerStoppedCh
	<-stoppedCh
	s.logger.Info("[graceful-termination] apiserver is exiting")
	return nil
}

// NonBlockingRun starts serving (if the config has SecureServing), runs the
// post-start hooks and notifies systemd. stopCh stops the HTTP server,
// which then shuts down within shutdownTimeout. stoppedCh closes when
// Shutdown returned; listenerStoppedCh when the listener stopped.
func (s PreparedServer) NonBlockingRun(stopCh <-chan struct{}, shutdownTimeout time.Duration) (stoppedCh, listenerStoppedCh <-chan struct{}, err error) {
	if s.cfg.SecureServing != nil {
		stoppedCh, listenerStoppedCh, err = s.cfg.SecureServing.Serve(s.handler, shutdownTimeout, stopCh, s.logger)
		if err != nil {
			return nil, nil, err
		}
	} else {
		st, ls := make(chan struct{}), make(chan struct{})
		go func() {
			<-stopCh
			close(ls)
			close(st)
		}()
		stoppedCh, listenerStoppedCh = st, ls
	}

	// Hooks see their context cancelled when the HTTP server is told to stop.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-stopCh
		cancel()
	}()
	s.runPostStartHooks(ctx)

	if err := notifySystemd(); err != nil {
		s.logger.Warn("unable to notify systemd", "err", err)
	}
	return stoppedCh, listenerStoppedCh, nil
}

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
