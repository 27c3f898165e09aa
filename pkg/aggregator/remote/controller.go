package remote

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kapi-dev/kapi/pkg/endpoints/discovery"
	"github.com/kapi-dev/kapi/pkg/server"
)

// Targets resolves the backend of a remote APIService.
type Targets interface {
	// Target returns the base URL of svc's backend (scheme and host; only
	// its path prefix, if any, is kept) and a transport that reaches it:
	// trusting spec.caBundle, presenting the front-proxy client
	// certificate. It is called once per round of fetches with a ctx
	// bounded by Config.Timeout, from several goroutines at once; an error
	// (service without endpoints, ...) counts as a failed fetch.
	Target(ctx context.Context, svc *apiregistrationv1.APIService) (*url.URL, http.RoundTripper, error)
}

// Defaults of [Config].
const (
	// DefaultResync is how often every backend is asked again, as
	// kube-aggregator refreshes discovery and OpenAPI v2.
	DefaultResync = time.Minute
	// DefaultTimeout bounds each request, as kube-aggregator's discovery
	// download.
	DefaultTimeout = 5 * time.Second
	// DefaultWorkers is how many backends are fetched at once.
	DefaultWorkers = 4
)

// firstBackoff is the first retry delay of a failing backend; it doubles
// with each failure in a row, up to Resync.
const firstBackoff = time.Second

// Config configures a [Controller].
type Config struct {
	// Discovery is the head's discovery manager. Required.
	Discovery *discovery.Manager
	// OpenAPI is the head's OpenAPI documents; nil merges no OpenAPI.
	OpenAPI *server.OpenAPI
	// Targets resolves backends. Required.
	Targets Targets
	// Resync is the refresh period (default [DefaultResync]).
	Resync time.Duration
	// Timeout bounds each request to a backend (default [DefaultTimeout]).
	Timeout time.Duration
	// Workers is how many backends are fetched at once (default
	// [DefaultWorkers]).
	Workers int
	// MaxBodyBytes bounds each response read (default 64 MiB).
	MaxBodyBytes int64
	Logger       *slog.Logger
}

// Controller keeps the discovery and OpenAPI of remote APIServices in the
// head's documents. Sync is safe for concurrent use and never blocks on a
// backend; Run does the fetching.
type Controller struct {
	cfg    Config
	logger *slog.Logger

	mu       sync.Mutex
	services map[schema.GroupVersion]*service
	queue    []*service
	ready    chan struct{} // one pending value: the queue may be non-empty
	resched  chan struct{} // one pending value: due times changed

	oa openAPIMerger
}

// service is one remote APIService. Fields above the line are guarded by
// Controller.mu; the fetch state below is owned by the worker while busy,
// or by whoever holds mu while it is not.
type service struct {
	gv schema.GroupVersion

	api       *apiregistrationv1.APIService // a private copy, never changed
	priority  discovery.Priority
	available bool
	resources []metav1.APIResource // last fetched, nil before
	current   bool                 // resources fetched by the last round
	published publishedState
	queued    bool
	busy      bool
	again     bool // changed while busy: fetch again when done
	removed   bool
	due       time.Time
	failures  int

	// ---- fetch state ----
	fetchedFor *apiregistrationv1.ServiceReference
	discETag   string // ETag of the backend's aggregated discovery
	v2ETag     string // the backend's ETag of /openapi/v2
	v2Hash     string // hash of the body when the backend sends no ETag
	v2Paths    []string
	v2Defs     []string
	v2Params   []string
	v3ETag     string // ETag of the backend's /openapi/v3 index
	v3URL      string // serverRelativeURL of the v3 document set, "" if none
}

type publishedState struct {
	done      bool
	resources []metav1.APIResource
	current   bool
	priority  discovery.Priority
}

// New returns a Controller; it fetches nothing until Run.
func New(cfg Config) (*Controller, error) {
	var errs []error
	if cfg.Discovery == nil {
		errs = append(errs, errors.New("discovery manager is required"))
	}
	if cfg.Targets == nil {
		errs = append(errs, errors.New("targets are required"))
	}
	if cfg.Resync < 0 || cfg.Timeout < 0 || cfg.Workers < 0 || cfg.MaxBodyBytes < 0 {
		errs = append(errs, errors.New("resync, timeout, workers and max body bytes must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("remote discovery controller: %w", err)
	}
	if cfg.Resync == 0 {
		cfg.Resync = DefaultResync
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Workers == 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 64 << 20
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return &Controller{
		cfg:      cfg,
		logger:   logger.With("controller", "remote-discovery"),
		services: map[schema.GroupVersion]*service{},
		ready:    make(chan struct{}, 1),
		resched:  make(chan struct{}, 1),
		oa:       openAPIMerger{api: cfg.OpenAPI, refs: map[string]int{}, params: map[string]int{}},
	}, nil
}

// Sync makes services, every APIService there is, the desired state. Local
// APIServices (spec.service nil) are ignored. A new remote group-version is
// listed in discovery at once (no resources, Stale) and fetched by Run;
// one whose spec or availability changed is fetched again; one no longer
// present leaves discovery and OpenAPI. Sync keeps no reference to
// services.
func (c *Controller) Sync(services []*apiregistrationv1.APIService) {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[schema.GroupVersion]bool{}
	for _, a := range services {
		if a == nil || a.Spec.Service == nil || a.Spec.Version == "" {
			continue
		}
		gv := schema.GroupVersion{Group: a.Spec.Group, Version: a.Spec.Version}
		if seen[gv] {
			continue
		}
		seen[gv] = true
		s := c.services[gv]
		if s == nil {
			s = &service{gv: gv}
			c.services[gv] = s
		}
		if s.removed {
			// Removed and added again while a worker was fetching it.
			s.removed, s.api, s.resources, s.current = false, nil, nil, false
		}
		available := isAvailable(a)
		changed := s.api == nil || !reflect.DeepEqual(s.api.Spec, a.Spec) || s.available != available
		if !changed {
			continue
		}
		s.api = a.DeepCopy()
		s.priority = discovery.Priority{Group: a.Spec.GroupPriorityMinimum, Version: a.Spec.VersionPriority}
		s.available = available
		if !available {
			s.current = false
		}
		c.publishLocked(s)
		c.enqueueLocked(s)
	}
	for gv, s := range c.services {
		if seen[gv] {
			continue
		}
		// Out of discovery at once; what the worker fetching it (if any)
		// merged into OpenAPI goes when it is done.
		s.removed = true
		c.cfg.Discovery.RemoveGroupVersion(gv, discovery.Remote())
		s.published = publishedState{}
		if !s.busy {
			c.cleanupLocked(s)
		}
	}
}

// isAvailable reports whether a's Available condition is True.
func isAvailable(a *apiregistrationv1.APIService) bool {
	for _, c := range a.Status.Conditions {
		if c.Type == apiregistrationv1.Available {
			return c.Status == apiregistrationv1.ConditionTrue
		}
	}
	return false
}

// publishLocked puts s in discovery if what it shows changed. c.mu is held.
func (c *Controller) publishLocked(s *service) {
	if s.removed {
		return
	}
	p := s.published
	if p.done && p.current == s.current && p.priority == s.priority && reflect.DeepEqual(p.resources, s.resources) {
		return
	}
	opts := []discovery.Option{discovery.Remote(), discovery.WithPriority(s.priority)}
	if !s.current {
		opts = append(opts, discovery.Stale())
	}
	if err := c.cfg.Discovery.AddGroupVersion(s.gv, s.resources, opts...); err != nil {
		// The backend's resources did not convert (say, a subresource
		// whose scope differs from its parent's): list the group-version
		// without them.
		c.logger.Error("backend discovery rejected", "groupVersion", s.gv, "err", err)
		if err := c.cfg.Discovery.AddGroupVersion(s.gv, nil, append(opts, discovery.Stale())...); err != nil {
			c.logger.Error("add group-version", "groupVersion", s.gv, "err", err)
		}
	}
	s.published = publishedState{done: true, resources: s.resources, current: s.current, priority: s.priority}
}

// cleanupLocked forgets s, removed from discovery already, and removes
// what it added to OpenAPI. c.mu is held and s is not busy.
func (c *Controller) cleanupLocked(s *service) {
	c.removeOpenAPI(s)
	delete(c.services, s.gv)
}

// enqueueLocked asks for s to be fetched as soon as a worker is free.
func (c *Controller) enqueueLocked(s *service) {
	if s.busy {
		s.again = true
		return
	}
	if s.queued {
		return
	}
	s.queued = true
	c.queue = append(c.queue, s)
	signal(c.ready)
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Run fetches backends until ctx ends, then returns once every worker has
// stopped (fetches in flight are cancelled). Call it once.
func (c *Controller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for range c.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.work(ctx)
		}()
	}
	defer wg.Wait()

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wait := c.enqueueDue(time.Now())
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-c.resched:
		}
	}
}

// enqueueDue queues the services due at now and returns how long until the
// next one is.
func (c *Controller) enqueueDue(now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	wait := time.Hour
	for _, s := range c.services {
		if s.queued || s.busy || s.removed {
			continue
		}
		if d := s.due.Sub(now); d > 0 {
			wait = min(wait, d)
			continue
		}
		c.enqueueLocked(s)
	}
	return wait
}

func (c *Controller) work(ctx context.Context) {
	for {
		s := c.next(ctx)
		if s == nil {
			return
		}
		ok := c.process(ctx, s)
		c.finish(ctx, s, ok)
	}
}

// next takes the next queued service and marks it busy; nil once ctx ends.
func (c *Controller) next(ctx context.Context) *service {
	for {
		if ctx.Err() != nil {
			return nil
		}
		c.mu.Lock()
		for len(c.queue) > 0 {
			s := c.queue[0]
			c.queue[0] = nil
			c.queue = c.queue[1:]
			s.queued = false
			if s.removed {
				continue
			}
			s.busy = true
			if len(c.queue) > 0 {
				signal(c.ready)
			}
			c.mu.Unlock()
			return s
		}
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil
		case <-c.ready:
		}
	}
}

// finish schedules s's next fetch after a round that succeeded (ok) or not.
func (c *Controller) finish(ctx context.Context, s *service, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s.busy = false
	if s.removed {
		c.cleanupLocked(s)
		return
	}
	now := time.Now()
	switch {
	case ok || ctx.Err() != nil:
		s.failures = 0
		s.due = now.Add(c.cfg.Resync)
	default:
		s.failures++
		s.due = now.Add(backoff(s.failures, c.cfg.Resync))
	}
	if s.again {
		s.again = false
		c.enqueueLocked(s)
	}
	signal(c.resched)
}

// backoff is 1s, 2s, 4s, ... for the n-th failure in a row, at most limit.
func backoff(n int, limit time.Duration) time.Duration {
	d := firstBackoff
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}
