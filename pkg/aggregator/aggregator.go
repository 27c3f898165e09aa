package aggregator

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/aggregator/apiservice"
	"github.com/kapi-dev/kapi/pkg/aggregator/proxy"
	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/endpoints/discovery"
	"github.com/kapi-dev/kapi/pkg/endpoints/fieldmanager"
	"github.com/kapi-dev/kapi/pkg/endpoints/installer"
	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/webhook/serviceresolver"
	"github.com/kapi-dev/kapi/pkg/webhook/x509metrics"
)

// Names the chain knows the aggregator's parts by (upstream's).
const (
	// RegistrationSignal is the MuxAndDiscoveryComplete signal: closed
	// once the proxy routes of every APIService stored at start are in.
	RegistrationSignal = "APIServiceRegistrationControllerInitiated"
	// InformersHook starts following the apiservices store.
	InformersHook = "start-kube-aggregator-informers"
	// RegistrationHook runs the proxy-route controller; it returns once
	// RegistrationSignal is closed.
	RegistrationHook = "apiservice-registration-controller"
	// LocalAvailableHook keeps local APIServices Available.
	LocalAvailableHook = "apiservice-status-local-available-controller"
	// RemoteAvailableHook probes non-local APIServices.
	RemoteAvailableHook = "apiservice-status-remote-available-controller"
	// AutoRegistrationHook keeps one local APIService per group-version
	// of the chain.
	AutoRegistrationHook = "kube-apiserver-autoregistration"
	// AutoregisterCompletionCheck is the name of
	// [Aggregator.AutoregisterCompletion].
	AutoregisterCompletionCheck = "autoregister-completion"
)

// ServiceLister is what the aggregator resolves services through.
type ServiceLister = serviceresolver.Lister

// Config is what the aggregator's content is built from.
type Config struct {
	// Admission is the admission chain of apiservice writes (the zero
	// Chain admits everything).
	Admission admission.Chain
	// Storage makes the storage of apiservices. Required.
	Storage generic.StorageFactory
	// Discovery is the chain's discovery: it receives
	// apiregistration.k8s.io/v1, and its LocalGroupVersions are
	// auto-registered as local APIServices. Required.
	Discovery *discovery.Manager
	// Services resolves the services of non-local APIServices. Required.
	Services ServiceLister
	// ProxyClientCert is presented to backends (the front-proxy client
	// certificate); nil: none.
	ProxyClientCert *tls.Certificate
	// MinRequestTimeout is --min-request-timeout (watch durations).
	MinRequestTimeout time.Duration
	// AvailabilityPeriod is how often an Available non-local APIService
	// is probed again (default 30s); an unavailable one is probed again
	// after min(AvailabilityPeriod, 5s). Changes are probed at once.
	AvailabilityPeriod time.Duration
	// DiscoveryTimeout bounds one discovery probe (default 5s, upstream's).
	DiscoveryTimeout time.Duration
	// DialTimeout bounds connecting to a backend (default 30s).
	DialTimeout time.Duration
	// OnChange, optional, is called with every APIService (sorted by
	// name; read-only) after each change the registration controller
	// sees, from one goroutine.
	OnChange func([]*apiregistrationv1.APIService)
	// ServiceChanges, optional, receives the namespace/name of every
	// Service whose object or endpoints changed: the non-local
	// APIServices using it are probed again at once (as upstream reacts
	// to Service and EndpointSlice events) instead of at their next
	// period.
	ServiceChanges <-chan types.NamespacedName
	Logger         *slog.Logger
	// Metrics receives the watch events of apiservices; nil: none.
	Metrics *metrics.Metrics
	// MetricsRegistry, optional, receives the availability controllers'
	// metrics (aggregator_unavailable_apiservice and _total) and the
	// proxy's apiserver_kube_aggregator_x509_* counters.
	MetricsRegistry prometheus.Registerer
}

// Aggregator is the installed aggregator.
type Aggregator struct {
	cfg      Config
	logger   *slog.Logger
	handler  *server.APIServerHandler
	store    *generic.Store
	status   *generic.StatusREST
	informer *informer
	// availability are the availability controllers' metrics (nil: none).
	availability *availabilityMetrics
	// x509 are the proxy's apiserver_kube_aggregator_x509_* counters (nil:
	// none).
	x509 *x509metrics.Counters
	// resources are apiregistration.k8s.io/v1's, as installed.
	resources []metav1.APIResource

	// builtin are the group-versions served when Install ran: their
	// APIServices are managed "onstart"; later ones (CRDs) "true".
	builtin map[schema.GroupVersion]bool

	pendingMu sync.Mutex
	pending   map[string]bool // builtin APIServices not yet seen Available

	transportsMu sync.Mutex
	transports   map[string]*cachedTransport

	routesMu sync.Mutex
	routes   map[string]*route

	initiated      chan struct{}
	closeInitiated func()

	wg sync.WaitGroup
}

type cachedTransport struct {
	key       transportKey
	transport *proxy.Transport
	err       error
}

// transportKey is what a transport is built from.
type transportKey struct {
	namespace, name string
	caBundle        string
	insecure        bool
}

func keyOf(svc *apiregistrationv1.APIService) transportKey {
	s := svc.Spec.Service
	return transportKey{namespace: s.Namespace, name: s.Name, caBundle: string(svc.Spec.CABundle), insecure: svc.Spec.InsecureSkipTLSVerify}
}

// Install serves apiservices on s (the head of the chain, created after
// the servers behind it, whose group-versions are in cfg.Discovery by
// now), adds apiregistration.k8s.io/v1 to discovery, registers
// [RegistrationSignal] and the post-start hooks listed in the package
// documentation. The controllers end with the hooks' context; s's destroy
// functions wait for them.
func Install(s *server.GenericServer, cfg Config) (*Aggregator, error) {
	if cfg.Storage == nil || cfg.Discovery == nil || cfg.Services == nil {
		return nil, errors.New("aggregator: Storage, Discovery and Services are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.AvailabilityPeriod <= 0 {
		cfg.AvailabilityPeriod = 30 * time.Second
	}
	if cfg.DiscoveryTimeout <= 0 {
		cfg.DiscoveryTimeout = proxy.DiscoveryTimeout
	}
	logger := cfg.Logger.With("server", "kube-aggregator")
	store, status, err := apiservice.NewREST(generic.RESTOptions{Storage: cfg.Storage, Logger: logger})
	if err != nil {
		return nil, err
	}
	s.AddDestroyFunc(store.Destroy)

	a := &Aggregator{
		cfg:        cfg,
		logger:     logger,
		handler:    s.Handler(),
		store:      store,
		status:     status,
		builtin:    map[schema.GroupVersion]bool{},
		pending:    map[string]bool{},
		transports: map[string]*cachedTransport{},
		routes:     map[string]*route{},
		initiated:  make(chan struct{}),
	}
	a.closeInitiated = sync.OnceFunc(func() { close(a.initiated) })
	a.informer = newInformer(store, logger, a.observe)
	if cfg.MetricsRegistry != nil {
		if a.x509, err = x509metrics.NewAggregatorCounters(cfg.MetricsRegistry, logger); err != nil {
			return nil, err
		}
		if a.availability, err = newAvailabilityMetrics(cfg.MetricsRegistry); err != nil {
			return nil, err
		}
		a.informer.removed = a.availability.forget
	}

	// The group-versions of the servers behind (the aggregator's own is
	// not auto-registered, as upstream).
	for _, gv := range cfg.Discovery.LocalGroupVersions() {
		if gv.Group == apiregistrationv1.GroupName {
			continue
		}
		a.builtin[gv] = true
		a.pending[apiservice.Name(gv)] = true
	}

	g := &installer.APIGroupVersion{
		GroupVersion: apiregistrationv1.SchemeGroupVersion,
		Storage: map[string]rest.Storage{
			"apiservices":        store,
			"apiservices/status": status,
		},
		FieldManagers:     fieldmanager.NewFactory(scheme.Scheme),
		Admission:         cfg.Admission,
		MinRequestTimeout: cfg.MinRequestTimeout,
		Metrics:           cfg.Metrics,
		Logger:            logger,
	}
	resources, err := g.Install(s.Handler())
	if err != nil {
		return nil, fmt.Errorf("install %s: %w", g.GroupVersion, err)
	}
	if err := cfg.Discovery.AddGroupVersion(g.GroupVersion, resources); err != nil {
		return nil, fmt.Errorf("discovery for %s: %w", g.GroupVersion, err)
	}
	cfg.Discovery.InstallGroupRoot(s.Handler(), apiregistrationv1.GroupName)
	a.resources = resources

	if err := s.RegisterMuxAndDiscoveryCompleteSignal(RegistrationSignal, a.initiated); err != nil {
		return nil, fmt.Errorf("aggregator: %w", err)
	}
	if err := a.addHooks(s); err != nil {
		return nil, err
	}
	s.AddDestroyFunc(func() {
		a.wg.Wait()
		a.closeTransports()
	})
	return a, nil
}

// addHooks registers the post-start hooks; each starts its controller in
// a goroutine the Aggregator waits for.
func (a *Aggregator) addHooks(s *server.GenericServer) error {
	routesChanged := a.informer.subscribe()
	localChanged := a.informer.subscribe()
	remoteChanged := a.informer.subscribe()
	autoChanged, autoTake := a.informer.subscribeNames()
	hooks := []struct {
		name string
		run  func(ctx context.Context)
	}{
		{InformersHook, a.informer.run},
		{RegistrationHook, func(ctx context.Context) { a.runRegistration(ctx, routesChanged) }},
		{LocalAvailableHook, func(ctx context.Context) { a.runLocalAvailability(ctx, localChanged) }},
		{RemoteAvailableHook, func(ctx context.Context) { a.runRemoteAvailability(ctx, remoteChanged) }},
		{AutoRegistrationHook, func(ctx context.Context) { a.runAutoRegistration(ctx, autoChanged, autoTake) }},
	}
	for _, h := range hooks {
		run := h.run
		wait := h.name == RegistrationHook
		if err := s.AddPostStartHook(h.name, func(ctx context.Context) error {
			a.wg.Add(1)
			go func() {
				defer a.wg.Done()
				run(ctx)
			}()
			if wait {
				// As upstream: the hook finishes once the routes of the
				// APIServices known at start are in.
				select {
				case <-a.initiated:
				case <-ctx.Done():
				}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("aggregator: %w", err)
		}
	}
	return nil
}

// Store returns the apiservices store (for in-process clients and tests).
func (a *Aggregator) Store() *generic.Store { return a.store }

// Resources returns the resources of apiregistration.k8s.io/v1 as
// installed (what discovery lists), e.g. to publish their OpenAPI.
func (a *Aggregator) Resources() []metav1.APIResource {
	out := make([]metav1.APIResource, len(a.resources))
	for i := range a.resources {
		a.resources[i].DeepCopyInto(&out[i])
	}
	return out
}

// APIServices returns every APIService the aggregator has seen (sorted by
// name; read-only).
func (a *Aggregator) APIServices() []*apiregistrationv1.APIService { return a.informer.list() }

// Target returns the base URL (https://<endpoint>, no path) of a ready
// endpoint of svc's service and a transport with svc's TLS settings and
// the front-proxy client certificate (no identity headers), for fetching
// the backend's discovery and OpenAPI. A local svc is an error. The
// transport counts deprecated certificates in
// apiserver_kube_aggregator_x509_*: upstream's discovery and OpenAPI
// aggregators fetch through the proxy handler, whose transport counts
// (its availability checks do not: checkDiscovery's client does not).
func (a *Aggregator) Target(ctx context.Context, svc *apiregistrationv1.APIService) (*url.URL, http.RoundTripper, error) {
	if svc.Spec.Service == nil {
		return nil, nil, fmt.Errorf("apiservice %s is local", svc.Name)
	}
	t, err := a.transportFor(svc)
	if err != nil {
		return nil, nil, fmt.Errorf("apiservice %s: %w", svc.Name, err)
	}
	u, err := serviceresolver.Resolve(ctx, a.cfg.Services, svc.Spec.Service.Namespace, svc.Spec.Service.Name, port(svc))
	if err != nil {
		return nil, nil, fmt.Errorf("apiservice %s: %w", svc.Name, err)
	}
	return u, a.x509.Wrap(t.RoundTripper()), nil
}

func port(svc *apiregistrationv1.APIService) int32 {
	if p := svc.Spec.Service.Port; p != nil {
		return *p
	}
	return 443
}

// transportFor returns svc's transport, built once per TLS setting.
func (a *Aggregator) transportFor(svc *apiregistrationv1.APIService) (*proxy.Transport, error) {
	key := keyOf(svc)
	a.transportsMu.Lock()
	defer a.transportsMu.Unlock()
	if c, ok := a.transports[svc.Name]; ok {
		if c.key == key {
			return c.transport, c.err
		}
		if c.transport != nil {
			c.transport.CloseIdleConnections()
		}
	}
	t, err := proxy.NewTransport(svc, a.cfg.ProxyClientCert, a.cfg.DialTimeout)
	a.transports[svc.Name] = &cachedTransport{key: key, transport: t, err: err}
	return t, err
}

func (a *Aggregator) closeTransports() {
	a.transportsMu.Lock()
	defer a.transportsMu.Unlock()
	for name, c := range a.transports {
		if c.transport != nil {
			c.transport.CloseIdleConnections()
		}
		delete(a.transports, name)
	}
}

// observe records that a built-in APIService has been seen Available.
func (a *Aggregator) observe(svc *apiregistrationv1.APIService) {
	if !apiservice.IsAvailable(svc) {
		return
	}
	a.pendingMu.Lock()
	defer a.pendingMu.Unlock()
	delete(a.pending, svc.Name)
}

// now is the time conditions are stamped with.
func now() metav1.Time { return metav1.Now() }
