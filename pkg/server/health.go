package server

import (
	"fmt"
	"time"

	"github.com/kapi-dev/kapi/pkg/server/healthz"
)

// AddHealthChecks adds checks to /healthz, /livez and /readyz (no livez
// grace period).
func (s *GenericServer) AddHealthChecks(checks ...healthz.HealthChecker) error {
	return s.addHealthChecks(0, checks...)
}

// AddBootSequenceHealthChecks adds checks that may fail while the server
// boots: on /livez they are hidden for LivezGracePeriod (health.md 28).
func (s *GenericServer) AddBootSequenceHealthChecks(checks ...healthz.HealthChecker) error {
	return s.addHealthChecks(s.cfg.LivezGracePeriod, checks...)
}

func (s *GenericServer) addHealthChecks(livezGrace time.Duration, checks ...healthz.HealthChecker) error {
	s.healthLock.Lock()
	defer s.healthLock.Unlock()
	if s.healthzInstalled {
		return fmt.Errorf("unable to add because the %s endpoint has already been created", "/healthz")
	}
	if s.livezInstalled {
		return fmt.Errorf("unable to add because the %s endpoint has already been created", "/livez")
	}
	if s.readyzInstalled {
		return fmt.Errorf("unable to add because the %s endpoint has already been created", "/readyz")
	}
	s.healthzChecks = append(s.healthzChecks, checks...)
	for _, c := range checks {
		s.livezChecks = append(s.livezChecks, healthz.DelayedHealthCheck(c, s.livezClock, livezGrace))
	}
	s.readyzChecks = append(s.readyzChecks, checks...)
	return nil
}

// AddReadyzChecks adds readiness-only checks.
func (s *GenericServer) AddReadyzChecks(checks ...healthz.HealthChecker) error {
	s.healthLock.Lock()
	defer s.healthLock.Unlock()
	if s.readyzInstalled {
		return fmt.Errorf("unable to add because the %s endpoint has already been created", "/readyz")
	}
	s.readyzChecks = append(s.readyzChecks, checks...)
	return nil
}

// AddLivezChecks adds liveness-only checks with the given grace period.
func (s *GenericServer) AddLivezChecks(grace time.Duration, checks ...healthz.HealthChecker) error {
	s.healthLock.Lock()
	defer s.healthLock.Unlock()
	if s.livezInstalled {
		return fmt.Errorf("unable to add because the %s endpoint has already been created", "/livez")
	}
	for _, c := range checks {
		s.livezChecks = append(s.livezChecks, healthz.DelayedHealthCheck(c, s.livezClock, grace))
	}
	return nil
}

func (s *GenericServer) healthOptions(firstSuccess func()) healthz.HandlerOptions {
	return healthz.HandlerOptions{FirstSuccess: firstSuccess, Metrics: s.cfg.HealthMetrics, Logger: s.logger}
}

// installHealth installs /healthz, /livez and, with the shutdown check
// appended last, /readyz (lifecycle.md 6). The first 200 of /readyz fires
// HasBeenReady (health.md 33).
func (s *GenericServer) installHealth() error {
	s.healthLock.Lock()
	defer s.healthLock.Unlock()
	mux := s.handler.NonRESTMux
	healthz.InstallPathHandler(mux, "/healthz", s.healthOptions(nil), s.healthzChecks...)
	s.healthzInstalled = true
	healthz.InstallPathHandler(mux, "/livez", s.healthOptions(nil), s.livezChecks...)
	s.livezInstalled = true
	s.readyzChecks = append(s.readyzChecks, healthz.NewShutdownCheck(s.cfg.LifecycleSignals.ShutdownInitiated.Signaled()))
	healthz.InstallPathHandler(mux, "/readyz", s.healthOptions(s.cfg.LifecycleSignals.HasBeenReady.Signal), s.readyzChecks...)
	s.readyzInstalled = true
	return nil
}
