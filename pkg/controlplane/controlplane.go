package controlplane

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/admission/plugins"
	"github.com/kapi-dev/kapi/pkg/admission/podsecurity"
	"github.com/kapi-dev/kapi/pkg/admission/resourcequota"
	"github.com/kapi-dev/kapi/pkg/admission/webhook"
	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/rbac"
	"github.com/kapi-dev/kapi/pkg/auth/serviceaccount"
	"github.com/kapi-dev/kapi/pkg/controlplane/allocator"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/accessreview"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/event"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/namespace"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/service"
	saregistry "github.com/kapi-dev/kapi/pkg/controlplane/registry/serviceaccount"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/tokenreview"
	"github.com/kapi-dev/kapi/pkg/endpoints/discovery"
	"github.com/kapi-dev/kapi/pkg/endpoints/fieldmanager"
	"github.com/kapi-dev/kapi/pkg/endpoints/installer"
	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/openapi"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/webhook/x509metrics"
)

// Config is what the core server's content is built from.
type Config struct {
	// Storage makes each resource's storage. Required.
	Storage generic.StorageFactory
	// Discovery receives the group-versions served. Required.
	Discovery *discovery.Manager
	// MinRequestTimeout is --min-request-timeout (watch durations).
	MinRequestTimeout time.Duration
	// NamespaceResync is how often the namespace controller re-examines
	// terminating namespaces (default 5s); it also reacts to watch events.
	NamespaceResync time.Duration
	Logger          *slog.Logger
	// Metrics receives the watch events the resources send; nil: none.
	Metrics *metrics.Metrics
	// Admission is the admission chain the server's resources use (shared
	// with the other servers of the chain); Install sets its plugins. The
	// zero Chain: Install makes a chain of its own.
	Admission admission.Chain
	// AdmissionPlugins selects the admission plugins Install sets on the
	// chain; nil: NamespaceLifecycle only.
	AdmissionPlugins *plugins.Selection
	// AdmissionMetrics receives the latencies of the chain Install makes
	// when Admission is zero; nil: none.
	AdmissionMetrics *admission.Metrics
	// WebhookMetrics receives the admission webhooks' metrics; nil: none.
	WebhookMetrics *webhook.Metrics
	// WebhookX509 counts admission webhook calls to servers with
	// deprecated certificates (apiserver_webhooks_x509_*); nil: none.
	WebhookX509 *x509metrics.Counters
	// PodSecurityMetrics receives PodSecurity's metrics; nil: none.
	PodSecurityMetrics *podsecurity.Metrics
	// LoopbackClientConfig, if set, is the server's client of itself;
	// admission policies read their params through it.
	LoopbackClientConfig func() (*rest.Config, error)

	// ServiceClusterIPRange is --service-cluster-ip-range: the range
	// Service ClusterIPs are allocated from (default
	// DefaultServiceClusterIPRange, 10.0.0.0/24). Its first address is
	// the "kubernetes" Service's.
	ServiceClusterIPRange netip.Prefix
	// ServiceNodePortRange is --service-node-port-range (default
	// allocator.DefaultNodePortRange, 30000-32767).
	ServiceNodePortRange allocator.PortRange
	// AllocatorMetrics receives the ClusterIP and NodePort allocators'
	// metrics; nil: none.
	AllocatorMetrics *allocator.Metrics
	// PublicAddress is the address the "kubernetes" Service's Endpoints
	// and EndpointSlice point at (--advertise-address; default
	// DefaultPublicAddress, 127.0.0.1).
	PublicAddress net.IP
	// SecurePort is the port the API server serves on, the "kubernetes"
	// Service's targetPort and endpoint port (default DefaultSecurePort,
	// 6443; pass the port actually bound when --secure-port is 0).
	SecurePort int
	// KubernetesServiceInterval is how often the bootstrap controller
	// reconciles the "kubernetes" Service and its endpoints and repairs the
	// ClusterIP and NodePort allocations (default
	// DefaultKubernetesServiceInterval, 10s).
	KubernetesServiceInterval time.Duration
	// AllocationRepairMinAge is how old an allocation no Service holds must
	// be before the repair releases it (default
	// DefaultAllocationRepairMinAge, 3m).
	AllocationRepairMinAge time.Duration
	// EventTTL is --event-ttl: events not written for that long are
	// deleted (default DefaultEventTTL, one hour).
	EventTTL time.Duration
	// OnServices, if set, is called by Install with the installed
	// Services, Endpoints and EndpointSlices resources (the aggregator and
	// webhook clients resolve Service references through them, e.g. with
	// ServiceStores.Reader).
	OnServices func(ServiceStores)

	// Authorizer is the authorizer of the filter chain: subject access
	// reviews answer with its decisions, and selfsubjectrulesreviews with
	// its rules if it implements accessreview.RuleResolver (nil means
	// pkg/auth/authorizer/interim, whose rules accessreview.InterimRules
	// lists).
	Authorizer authorizer.Authorizer
	// CustomResources, optional, gives the admission webhooks' and
	// policies' matchPolicy Equivalent the served versions of custom
	// resources and their conversion.
	CustomResources CustomResourceVersions
	// RBAC resolves the rules users hold for the escalation checks of the
	// RBAC resources (pkg/auth/rbac); nil disables the checks.
	RBAC *rbac.Authorizer
	// RuleResolver answers selfsubjectrulesreviews; nil: the rules of
	// Authorizer if it resolves rules (accessreview.RulesOf).
	RuleResolver accessreview.RuleResolver
	// TokenAuthenticator authenticates the tokens of TokenReviews (e.g.
	// tokenreview.FromRequest(the chain's authenticator)); nil answers
	// every TokenReview unauthenticated.
	TokenAuthenticator TokenAuthenticator
	// ServiceAccountTokens, if set, serves serviceaccounts/<name>/token
	// (TokenRequest) with that configuration.
	ServiceAccountTokens *saregistry.TokenConfig
	// OnServiceAccountObjects, if set, is called by Install with a reader
	// of the service accounts, secrets, pods and nodes that
	// service-account tokens name (the token authenticator checks them).
	OnServiceAccountObjects func(serviceaccount.Getter)
	// ExtensionAPIServerAuthentication is the data published in
	// kube-system/extension-apiserver-authentication (see
	// requestheader.AuthenticationConfigMapData); nil publishes nothing.
	ExtensionAPIServerAuthentication map[string]string
	// ClusterAuthenticationInterval is how often that configmap is
	// reconciled (default DefaultClusterAuthenticationInterval, 1m).
	ClusterAuthenticationInterval time.Duration

	// StorageHealth checks the storage (etcd, embedded or external); the
	// componentstatuses report it as etcd-0. Nil on the memory backend,
	// which has no etcd to report.
	StorageHealth func(ctx context.Context) error
}

// TokenAuthenticator authenticates the bearer tokens of TokenReviews.
type TokenAuthenticator = tokenreview.TokenAuthenticator

// ServiceStores are the installed Services, Endpoints and EndpointSlices
// resources. Reads through them skip authentication, authorization and
// admission; Services must be written through Services (not its generic
// store), which allocates ClusterIPs and NodePorts.
type ServiceStores struct {
	Services       *service.REST
	Endpoints      *generic.Store
	EndpointSlices *generic.Store
}

// Reader returns a reader of Services and their endpoints (its method set
// is serviceresolver.Lister, package pkg/webhook/serviceresolver).
func (s ServiceStores) Reader() *service.Reader {
	return service.NewReader(s.Services, s.Endpoints, s.EndpointSlices)
}

// complete fills in the defaults of the service fields.
func (c *Config) complete() error {
	if !c.ServiceClusterIPRange.IsValid() {
		c.ServiceClusterIPRange = DefaultServiceClusterIPRange
	}
	if c.ServiceNodePortRange == (allocator.PortRange{}) {
		c.ServiceNodePortRange = allocator.DefaultNodePortRange
	}
	if c.PublicAddress == nil {
		c.PublicAddress = DefaultPublicAddress
	}
	if c.SecurePort == 0 {
		c.SecurePort = DefaultSecurePort
	}
	if c.SecurePort < 1 || c.SecurePort > 65535 {
		return fmt.Errorf("controlplane: invalid secure port %d", c.SecurePort)
	}
	if c.KubernetesServiceInterval <= 0 {
		c.KubernetesServiceInterval = DefaultKubernetesServiceInterval
	}
	if c.AllocationRepairMinAge <= 0 {
		c.AllocationRepairMinAge = DefaultAllocationRepairMinAge
	}
	if c.ClusterAuthenticationInterval <= 0 {
		c.ClusterAuthenticationInterval = DefaultClusterAuthenticationInterval
	}
	return nil
}

// Installed is one group-version the core server serves.
type Installed struct {
	GroupVersion schema.GroupVersion
	Resources    []metav1.APIResource
	// OpenAPI describes Resources for the OpenAPI documents.
	OpenAPI []openapi.Resource
}

// Install adds the built-in resources of the group tables (see
// builtinGroups) to the core server s, registers them with discovery, and
// adds the post-start hooks that bootstrap the system namespaces, run the
// namespace controller, and run the bootstrap controller (the "kubernetes"
// Service and its endpoints, allocation repair), and, when
// Config.ExtensionAPIServerAuthentication is set, the
// start-cluster-authentication-info-controller hook that publishes it. It
// returns what it installed (for OpenAPI).
func Install(s *server.GenericServer, c Config) ([]Installed, error) {
	if c.Storage == nil || c.Discovery == nil {
		return nil, errors.New("controlplane: Storage and Discovery are required")
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if err := c.complete(); err != nil {
		return nil, err
	}
	var clusterAuth authInfo
	if c.ExtensionAPIServerAuthentication != nil {
		var err error
		if clusterAuth, err = parseAuthInfo(c.ExtensionAPIServerAuthentication, true); err != nil {
			return nil, fmt.Errorf("controlplane: ExtensionAPIServerAuthentication: %w", err)
		}
	}
	b, err := newStorageBuilder(generic.RESTOptions{Storage: c.Storage, Logger: c.Logger}, c, builtinGroups)
	if err != nil {
		return nil, err
	}
	if err := b.build(); err != nil {
		b.destroy()
		return nil, err
	}
	s.AddDestroyFunc(b.destroy)
	conversions, err := b.fieldLabelConversions()
	if err != nil {
		return nil, err
	}
	if err := registerScheme(conversions); err != nil {
		return nil, err
	}
	// What the controllers below work on.
	ns, err := storageAs[*namespace.REST](b, namespacesResource)
	if err != nil {
		return nil, err
	}
	nsFinalize, err := subresourceAs[*namespace.FinalizeREST](b, namespacesResource, "finalize")
	if err != nil {
		return nil, err
	}
	cms, err := storageAs[*generic.Store](b, configMapsResource)
	if err != nil {
		return nil, err
	}
	events, err := storageAs[*generic.Store](b, eventsResource)
	if err != nil {
		return nil, err
	}
	eventTTL := c.EventTTL
	if eventTTL <= 0 {
		eventTTL = DefaultEventTTL
	}
	// As upstream, events are written with the TTL (etcd: under a lease);
	// the collector below deletes them where the backend has no TTL.
	events.TTL = uint64(eventTTL / time.Second)
	svcs, err := servicesOf(b)
	if err != nil {
		return nil, err
	}
	if c.OnServices != nil {
		c.OnServices(ServiceStores{Services: svcs.services, Endpoints: svcs.endpoints, EndpointSlices: svcs.slices})
	}
	if c.OnServiceAccountObjects != nil {
		objects, err := serviceAccountObjects(b)
		if err != nil {
			return nil, err
		}
		c.OnServiceAccountObjects(objects)
	}

	// Creating into a missing or terminating namespace is refused, and the
	// system namespaces cannot be deleted (NamespaceLifecycle); a write
	// over a quota of its namespace is refused, the others are charged to
	// the quotas (ResourceQuota).
	chain := c.Admission
	if chain == (admission.Chain{}) {
		chain = admission.NewChain(c.AdmissionMetrics)
	}
	// Webhooks and policies are built here (they start their informers in
	// post-start hooks); the registry puts them in upstream's order if
	// they are enabled.
	mutatingWebhooks, validatingWebhooks, err := webhookPlugins(s, c, b, clusterScoped{ns}, svcs)
	if err != nil {
		return nil, err
	}
	policies, err := policyPlugin(s, c, b, clusterScoped{ns})
	if err != nil {
		return nil, err
	}
	mutatingPolicies, err := mutatingPolicyPlugin(s, c, b, clusterScoped{ns})
	if err != nil {
		return nil, err
	}
	quotas, err := quotaStoreOf(b)
	if err != nil {
		return nil, err
	}
	admissionPlugins, err := admissionPlugins(c, b, namespaceReader{clusterScoped{ns}}, map[string]admission.Plugin{
		plugins.MutatingAdmissionPolicy:    mutatingPolicies,
		plugins.MutatingAdmissionWebhook:   mutatingWebhooks,
		plugins.ValidatingAdmissionPolicy:  policies,
		plugins.ValidatingAdmissionWebhook: validatingWebhooks,
		plugins.ResourceQuota:              resourcequota.New(quotas),
	})
	if err != nil {
		return nil, err
	}
	chain.SetPlugins(admissionPlugins...)
	installed, err := installGroups(s, c, b, chain)
	if err != nil {
		return nil, err
	}

	if err := s.AddPostStartHook("bootstrap-namespaces", func(ctx context.Context) error {
		return bootstrapNamespaces(ctx, ns, c.Logger)
	}); err != nil {
		return nil, err
	}
	ctrl := &namespaceController{
		namespaces: ns,
		finalize:   nsFinalize,
		content:    b.namespacedContent(),
		resync:     c.NamespaceResync,
		logger:     c.Logger.With("controller", "namespace"),
	}
	ctrlDone := make(chan struct{})
	var started atomic.Bool
	ttl := c.EventTTL
	if ttl <= 0 {
		ttl = DefaultEventTTL
	}
	collector := &eventCollector{events: events, ttl: ttl, now: time.Now, logger: c.Logger.With("controller", "event-ttl")}
	if err := s.AddPostStartHook("start-namespace-controller", func(ctx context.Context) error {
		started.Store(true)
		go func() {
			defer close(ctrlDone)
			// The namespace controller and the event TTL collector: both
			// clean up after content, both end when the HTTP server is
			// told to stop.
			done := make(chan struct{})
			go func() {
				defer close(done)
				collector.run(ctx)
			}()
			ctrl.run(ctx)
			<-done
		}()
		return nil
	}); err != nil {
		return nil, err
	}
	// Destroy functions run in reverse order: the controller has stopped
	// before the stores are destroyed.
	s.AddDestroyFunc(func() {
		if started.Load() {
			<-ctrlDone
		}
	})
	if err := addBootstrapController(s, c, svcs); err != nil {
		return nil, err
	}
	if err := addSystemPriorityClasses(s, b, c.Logger); err != nil {
		return nil, err
	}
	if err := addDefaultServiceCIDR(s, c, b); err != nil {
		return nil, err
	}
	if c.ExtensionAPIServerAuthentication != nil {
		if err := addClusterAuthenticationInfo(s, &clusterAuthInfo{
			configmaps: cms,
			namespaces: clusterScoped{ns},
			required:   clusterAuth,
			interval:   c.ClusterAuthenticationInterval,
			logger:     c.Logger.With("controller", "cluster-authentication-info"),
			now:        time.Now,
		}); err != nil {
			return nil, err
		}
	}
	return installed, nil
}

// installGroups serves every group-version of b's tables on s, with the
// admission chain, and registers them and their groups with discovery.
func installGroups(s *server.GenericServer, c Config, b *storageBuilder, chain admission.Chain) ([]Installed, error) {
	var installed []Installed
	// Discovery takes every group-version in one update: it rebuilds its
	// documents at each update, and one per group-version made the
	// start's discovery work grow with the square of their number.
	served := map[schema.GroupVersion][]metav1.APIResource{}
	for _, group := range b.groups {
		for _, version := range group.versions {
			storage, err := b.groupVersionStorage(group.name, version)
			if err != nil {
				return nil, err
			}
			g := &installer.APIGroupVersion{
				GroupVersion:      schema.GroupVersion{Group: group.name, Version: version.name},
				Storage:           storage,
				MinRequestTimeout: c.MinRequestTimeout,
				Metrics:           c.Metrics,
				Admission:         chain,
				FieldManagers:     fieldmanager.NewFactory(scheme.Scheme),
				Logger:            c.Logger,
			}
			resources, err := g.Install(s.Handler())
			if err != nil {
				return nil, fmt.Errorf("install %s: %w", g.GroupVersion, err)
			}
			installed = append(installed, Installed{GroupVersion: g.GroupVersion, Resources: resources, OpenAPI: g.OpenAPIResources(resources)})
			served[g.GroupVersion] = resources
		}
	}
	if err := c.Discovery.Update(served, nil); err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	for _, group := range b.groups {
		c.Discovery.InstallGroupRoot(s.Handler(), group.name)
	}
	return installed, nil
}

// clusterScoped reads namespaces with no request namespace on the context
// (admission runs in the context of a namespaced request), and as a get of
// namespaces: the request's own RequestInfo would name its resource in a
// NotFound (`configmaps "nope" not found` instead of kube's
// `namespaces "nope" not found`).
type clusterScoped struct{ ns *namespace.REST }

func (c clusterScoped) Get(ctx context.Context, name string, o *metav1.GetOptions) (runtime.Object, error) {
	ctx = request.WithRequestInfo(request.WithNamespace(ctx, ""), &request.RequestInfo{
		IsResourceRequest: true,
		Verb:              "get",
		APIPrefix:         "api",
		APIVersion:        "v1",
		Resource:          "namespaces",
		Name:              name,
	})
	return c.ns.Get(ctx, name, o)
}

// addEventConversions lets the scheme convert core/v1 and events.k8s.io/v1
// Events into each other, so managed fields recorded through one group are
// kept when the object is written through the other (kube converts them
// through its internal version).
func addEventConversions(s *runtime.Scheme) error {
	if err := s.AddConversionFunc((*corev1.Event)(nil), (*eventsv1.Event)(nil), func(a, b any, _ conversion.Scope) error {
		*b.(*eventsv1.Event) = *event.ToEventsV1(a.(*corev1.Event))
		return nil
	}); err != nil {
		return err
	}
	return s.AddConversionFunc((*eventsv1.Event)(nil), (*corev1.Event)(nil), func(a, b any, _ conversion.Scope) error {
		*b.(*corev1.Event) = *event.FromEventsV1(a.(*eventsv1.Event))
		return nil
	})
}
