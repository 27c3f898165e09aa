package healthz

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// ErrInstalled is returned when checks are added to, or installed from, a
// [Registry] that has already been installed: the list is frozen at install
// time (health.md intro).
var ErrInstalled = errors.New("health endpoint already installed")

// Registry is the ordered list of checks of one endpoint until it is
// installed. It is safe for concurrent use.
type Registry struct {
	path string

	mu        sync.Mutex
	checks    []HealthChecker
	installed bool
}

// NewRegistry returns an empty registry for path ("/healthz", "/livez" or
// "/readyz") holding checks, in order.
func NewRegistry(path string, checks ...HealthChecker) *Registry {
	return &Registry{path: path, checks: slices.Clone(checks)}
}

// Path is the endpoint's path.
func (r *Registry) Path() string { return r.path }

// Add appends checks in order. After Install it fails with [ErrInstalled].
func (r *Registry) Add(checks ...HealthChecker) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.installed {
		return fmt.Errorf("add health checks to %s: %w", r.path, ErrInstalled)
	}
	r.checks = append(r.checks, checks...)
	return nil
}

// Checks returns a copy of the current list.
func (r *Registry) Checks() []HealthChecker {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.checks)
}

// Install freezes the list and installs it on mux with [InstallPathHandler].
// A second Install fails with [ErrInstalled].
func (r *Registry) Install(mux Mux, opts HandlerOptions) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.installed {
		return fmt.Errorf("install %s: %w", r.path, ErrInstalled)
	}
	r.installed = true
	InstallPathHandler(mux, r.path, opts, r.checks...)
	return nil
}

// Endpoints holds the /healthz, /livez and /readyz lists of one server and
// applies the livez grace period (health.md 25-31).
//
// The server builds it from its config-level checks, then adds checks in
// this order: its own construction-time checks (informer-sync with
// AddReadyzChecks, post-start hooks with AddBootSequenceHealthChecks), then
// the delegate's checks with AddDelegateChecks, then later checks, and
// finally, in PrepareRun, NewShutdownCheck with AddReadyzChecks before
// installing the three registries.
type Endpoints struct {
	Healthz *Registry
	Livez   *Registry
	Readyz  *Registry

	clock            clock.PassiveClock
	livezGracePeriod time.Duration
}

// NewEndpoints returns the three lists, starting with the config-level
// checks of each. clk (nil means the real clock) and livezGracePeriod are
// used by AddBootSequenceHealthChecks.
func NewEndpoints(clk clock.PassiveClock, livezGracePeriod time.Duration, healthz, livez, readyz []HealthChecker) *Endpoints {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Endpoints{
		Healthz:          NewRegistry("/healthz", healthz...),
		Livez:            NewRegistry("/livez", livez...),
		Readyz:           NewRegistry("/readyz", readyz...),
		clock:            clk,
		livezGracePeriod: livezGracePeriod,
	}
}

// AddHealthChecks adds checks to all three endpoints with no grace period
// (generic checks, health.md 30).
func (e *Endpoints) AddHealthChecks(checks ...HealthChecker) error {
	return errors.Join(e.Healthz.Add(checks...), e.Livez.Add(checks...), e.Readyz.Add(checks...))
}

// AddBootSequenceHealthChecks adds checks to all three endpoints; on /livez
// each is wrapped with [DelayedHealthCheck] so it passes until now plus the
// livez grace period (health.md 28, 29).
func (e *Endpoints) AddBootSequenceHealthChecks(checks ...HealthChecker) error {
	delayed := make([]HealthChecker, len(checks))
	for i, c := range checks {
		delayed[i] = DelayedHealthCheck(c, e.clock, e.livezGracePeriod)
	}
	return errors.Join(e.Healthz.Add(checks...), e.Livez.Add(delayed...), e.Readyz.Add(checks...))
}

// AddReadyzChecks adds readiness-only checks.
func (e *Endpoints) AddReadyzChecks(checks ...HealthChecker) error {
	return e.Readyz.Add(checks...)
}

// AddLivezChecks adds liveness-only checks, each delayed by delay.
func (e *Endpoints) AddLivezChecks(delay time.Duration, checks ...HealthChecker) error {
	delayed := make([]HealthChecker, len(checks))
	for i, c := range checks {
		delayed[i] = DelayedHealthCheck(c, e.clock, delay)
	}
	return e.Livez.Add(delayed...)
}

// AddDelegateChecks merges a delegate server's healthz checks (health.md
// 26, 31): each check of delegateHealthz whose name is not among the names
// of ownConfigChecks (this server's config-level healthz checks) is added to
// all three endpoints with no grace period. The delegate's /healthz list
// holds its boot-sequence checks unwrapped, so they lose their livez grace
// here, as upstream.
func (e *Endpoints) AddDelegateChecks(ownConfigChecks, delegateHealthz []HealthChecker) error {
	own := make(map[string]bool, len(ownConfigChecks))
	for _, c := range ownConfigChecks {
		own[c.Name()] = true
	}
	var errs []error
	for _, c := range delegateHealthz {
		if own[c.Name()] {
			continue
		}
		errs = append(errs, e.AddHealthChecks(c))
	}
	return errors.Join(errs...)
}
