package server

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/version"

	"github.com/kapi-dev/kapi/pkg/server/healthz"
)

// Config is what every server of a chain is built from. The servers of one
// chain are built from copies of one Config, so they share the lifecycle
// signals, wait groups, registry and serving information.
type Config struct {
	Logger *slog.Logger

	// SecureServing is how the head of the chain serves; nil means the
	// server is not served by itself (tests may serve Handler directly).
	SecureServing *SecureServingInfo

	LifecycleSignals LifecycleSignals

	// ShutdownDelayDuration (D) keeps serving, with /readyz red, after the
	// stop signal.
	ShutdownDelayDuration time.Duration
	// ShutdownSendRetryAfter keeps the listener open after
	// NotAcceptingNewRequest and answers new requests with 429 until
	// in-flight ones drained.
	ShutdownSendRetryAfter bool
	// ShutdownWatchTerminationGracePeriod (G) bounds how long watches are
	// given to end during shutdown; 0 means watches are not waited for.
	ShutdownWatchTerminationGracePeriod time.Duration
	// RequestTimeout (T) bounds non-long-running requests and, in default
	// mode, http.Server.Shutdown.
	RequestTimeout time.Duration
	// LivezGracePeriod hides failures of boot-sequence checks on /livez.
	LivezGracePeriod time.Duration

	// Config-level health checks (ping, log, etcd...): they come first on
	// each endpoint (health.md 25).
	HealthzChecks []healthz.HealthChecker
	LivezChecks   []healthz.HealthChecker
	ReadyzChecks  []healthz.HealthChecker
	HealthMetrics *healthz.Metrics

	// BuildHandlerChainFunc wraps the director in the filters. Only the
	// head's chain is ever served.
	BuildHandlerChainFunc func(apiHandler http.Handler, c *Config) http.Handler

	// NonLongRunningRequestWaitGroup is what the wait-group filter adds
	// non-long-running requests to; Run waits on it after
	// NotAcceptingNewRequest.
	NonLongRunningRequestWaitGroup Waiter
	// WatchRequestWaitGroup tracks watches when G > 0.
	WatchRequestWaitGroup WatchWaiter

	// AuditBackend, if set, is started before serving and shut down after
	// InFlightRequestsDrained.
	AuditBackend AuditBackend

	// Version is served at /version.
	Version *version.Info

	// EnableProfiling serves /debug/pprof/ (--profiling).
	EnableProfiling bool
	// MetricsRegistry is this process's (or test's) registry, served at
	// /metrics. Never the prometheus default registry.
	MetricsRegistry *prometheus.Registry
	// MetricsGatherer, if set, is what /metrics serves in place of
	// MetricsRegistry (which it gathers from, filtered).
	MetricsGatherer prometheus.Gatherer

	// PostStartHooks are added to every server built from this config.
	PostStartHooks map[string]PostStartHookFunc

	// OnPostStartHookError is called when a post-start hook fails. The
	// command sets it to exit 255 as kube-apiserver does; the default logs
	// and closes nothing (library code never exits).
	OnPostStartHookError func(name string, err error)
}

// Waiter is a wait group that stops accepting new members once Wait is
// called (the handler-chain wait group).
type Waiter interface {
	Wait()
}

// WatchWaiter tells active watches to end and waits, at most grace, for
// them to do so.
type WatchWaiter interface {
	Wait(grace time.Duration)
}

// AuditBackend receives audit events.
type AuditBackend interface {
	// Run starts the backend; it stops consuming when stopCh closes.
	Run(stopCh <-chan struct{}) error
	// Shutdown flushes every queued event and releases the backend.
	Shutdown()
}

// NewConfig returns a config with kube-apiserver's defaults.
func NewConfig(logger *slog.Logger) *Config {
	if logger == nil {
		logger = slog.Default()
	}
	return &Config{
		Logger:           logger,
		LifecycleSignals: NewLifecycleSignals(logger, nil),
		RequestTimeout:   60 * time.Second,
		HealthzChecks:    []healthz.HealthChecker{healthz.PingHealthz},
		LivezChecks:      []healthz.HealthChecker{healthz.PingHealthz},
		ReadyzChecks:     []healthz.HealthChecker{healthz.PingHealthz},
		MetricsRegistry:  prometheus.NewRegistry(),
	}
}

// CompletedConfig is a Config whose defaults have been filled in; only it
// can build a server.
type CompletedConfig struct {
	*Config
}

// Complete fills in derived defaults and checks the config.
func (c *Config) Complete() (CompletedConfig, error) {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.LifecycleSignals.ShutdownInitiated == nil {
		c.LifecycleSignals = NewLifecycleSignals(c.Logger, nil)
	}
	if c.MetricsRegistry == nil {
		c.MetricsRegistry = prometheus.NewRegistry()
	}
	if c.OnPostStartHookError == nil {
		logger := c.Logger
		c.OnPostStartHookError = func(name string, err error) {
			logger.Error("post-start hook failed", "hook", name, "err", err)
		}
	}
	var errs []error
	if c.ShutdownDelayDuration < 0 {
		errs = append(errs, errors.New("--shutdown-delay-duration can not be negative value"))
	}
	if c.ShutdownWatchTerminationGracePeriod < 0 {
		errs = append(errs, errors.New("shutdown-watch-termination-grace-period, if provided, can not be a negative value"))
	}
	if c.RequestTimeout < 0 {
		errs = append(errs, errors.New("--request-timeout can not be negative value"))
	}
	if c.LivezGracePeriod < 0 {
		errs = append(errs, errors.New("--livez-grace-period can not be a negative value"))
	}
	if err := errors.Join(errs...); err != nil {
		return CompletedConfig{}, err
	}
	return CompletedConfig{c}, nil
}
