package apiextensions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/apiextensions/cel"
	"github.com/kapi-dev/kapi/pkg/apiextensions/conversion"
	"github.com/kapi-dev/kapi/pkg/apiextensions/customresource"
	"github.com/kapi-dev/kapi/pkg/endpoints/discovery"
	"github.com/kapi-dev/kapi/pkg/endpoints/fieldmanager"
	"github.com/kapi-dev/kapi/pkg/endpoints/installer"
	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/openapi"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/webhook/x509metrics"
)

// Names the chain knows the apiextensions server's parts by (upstream's).
const (
	// CRDInformerSyncedSignal is the MuxAndDiscoveryComplete signal Install
	// registers: closed once every established CRD stored at start is
	// served (routes and discovery).
	CRDInformerSyncedSignal = "CRDInformerHasNotSynced"
	// ControllersHook is the post-start hook that runs the controller.
	ControllersHook = "start-apiextensions-controllers"
	// CRDInformerSyncedHook is the post-start hook that finishes when
	// CRDInformerSyncedSignal closes: its check,
	// "poststarthook/crd-informer-synced", keeps /readyz failing until
	// every established CRD stored at start is served.
	CRDInformerSyncedHook = "crd-informer-synced"
)

// Config is what the apiextensions server's content is built from.
type Config struct {
	// Admission is the admission chain of CRD and custom resource writes
	// (the zero Chain admits everything).
	Admission admission.Chain
	// Storage makes the storage of customresourcedefinitions (the type is
	// in pkg/api/scheme.Scheme, protobuf included) with the factory's
	// codec, and of each served version of every CRD with the CRD
	// server's codec (JSON in the storage version, decoded as the served
	// version) at "/<group>/<plural>". Required.
	Storage generic.StorageFactory
	// Discovery receives apiextensions.k8s.io/v1 and every served version
	// of every established CRD. Required.
	Discovery *discovery.Manager
	// OpenAPI, optional, receives the OpenAPI v3 documents of
	// apiextensions.k8s.io/v1 (and its v2 definitions) and of every
	// group-version of custom resources.
	OpenAPI *server.OpenAPI
	// MinRequestTimeout is --min-request-timeout (watch durations).
	MinRequestTimeout time.Duration
	// Resync is how often the controller re-examines the CRDs that are
	// not yet established and served as they are (default 5 minutes, as
	// upstream's informers); it also reacts to watch events at once, and
	// retries a CRD whose custom resources are not all gone after a
	// second.
	Resync time.Duration
	// ConversionServiceResolver resolves the services of conversion
	// webhooks (spec.conversion.webhook.clientConfig.service); nil: CRDs
	// whose webhook is a service are not served (URL webhooks work).
	ConversionServiceResolver conversion.ServiceResolver
	// WebhookX509 counts conversion webhook calls to servers whose
	// certificates have no SAN or a SHA-1 signature (the server's
	// apiserver_webhooks_x509_* counters); nil: not counted.
	WebhookX509 *x509metrics.Counters
	// CustomResources, optional, is bound to the server's custom
	// resources (admission's matchPolicy Equivalent).
	CustomResources *CustomResources
	Logger          *slog.Logger
	// Metrics receives the watch events of CRDs and custom resources;
	// nil: none.
	Metrics *metrics.Metrics
	// OpenAPIMetrics, optional, are the OpenAPI regeneration families
	// (NewOpenAPIMetrics).
	OpenAPIMetrics *OpenAPIMetrics
	// CELMetrics, optional, are the CEL and validation ratcheting
	// families (cel.NewMetrics).
	CELMetrics *cel.Metrics
}

// Install serves customresourcedefinitions on s (the apiextensions server
// of the chain, before the server in front of it is created, which copies
// its hooks and signals), registers the MuxAndDiscoveryComplete signal
// [CRDInformerSyncedSignal], the post-start hook [ControllersHook] that
// runs the controller, which serves established CRDs, and the post-start
// hook [CRDInformerSyncedHook] that holds readiness until the CRDs stored
// at start are served. The controller ends with the hook's context; s's
// destroy functions wait for it and release every storage.
func Install(s *server.GenericServer, cfg Config) error {
	if cfg.Storage == nil || cfg.Discovery == nil {
		return errors.New("apiextensions: Storage and Discovery are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	logger := cfg.Logger.With("server", "apiextensions-apiserver")
	crdREST, crdStatus, err := newCRDREST(generic.RESTOptions{Storage: cfg.Storage, Logger: logger}, cfg.CELMetrics)
	if err != nil {
		return fmt.Errorf("customresourcedefinitions: %w", err)
	}
	s.AddDestroyFunc(crdREST.Destroy)

	g := &installer.APIGroupVersion{
		GroupVersion: apiextensionsv1.SchemeGroupVersion,
		Storage: map[string]rest.Storage{
			"customresourcedefinitions":        crdREST,
			"customresourcedefinitions/status": crdStatus,
		},
		FieldManagers:     fieldmanager.NewFactory(scheme.Scheme),
		Admission:         cfg.Admission,
		MinRequestTimeout: cfg.MinRequestTimeout,
		Metrics:           cfg.Metrics,
		Logger:            logger,
	}
	resources, err := g.Install(s.Handler())
	if err != nil {
		return fmt.Errorf("install %s: %w", g.GroupVersion, err)
	}
	if err := cfg.Discovery.AddGroupVersion(g.GroupVersion, resources); err != nil {
		return fmt.Errorf("discovery for %s: %w", g.GroupVersion, err)
	}
	cfg.Discovery.InstallGroupRoot(s.Handler(), apiextensionsv1.GroupName)

	var crAPI *crOpenAPI
	if cfg.OpenAPI != nil {
		publishCRDGroup(cfg.OpenAPI, g.GroupVersion, g.OpenAPIResources(resources))
		if crAPI, err = newCROpenAPI(cfg.OpenAPI, openapi.Default()); err != nil {
			return err
		}
	}
	crs := &crServer{
		handler:            s.Handler(),
		storage:            cfg.Storage,
		discovery:          cfg.Discovery,
		openAPI:            crAPI,
		minRequestTimeout:  cfg.MinRequestTimeout,
		metrics:            cfg.Metrics,
		celMetrics:         cfg.CELMetrics,
		admission:          cfg.Admission,
		logger:             logger,
		serializer:         customresource.NewSerializer(),
		crds:               map[string]*crdServing{},
		conversionResolver: cfg.ConversionServiceResolver,
		conversionX509:     cfg.WebhookX509,
	}
	if cfg.CustomResources != nil {
		cfg.CustomResources.s.Store(crs)
	}
	// ObjectMeta's schemas for server-side apply, built on first use:
	// those the OpenAPI documents use, else ObjectMeta's alone.
	crs.metaSchemas = sync.OnceValues(func() (map[string]*spec.Schema, error) { return customresource.MetaSchemas(openapi.Default()) })
	if crAPI != nil {
		crs.metaSchemas = crAPI.meta
	}
	synced := make(chan struct{})
	if err := s.RegisterMuxAndDiscoveryCompleteSignal(CRDInformerSyncedSignal, synced); err != nil {
		return fmt.Errorf("apiextensions: %w", err)
	}
	statusFields, err := fieldmanager.New(fieldmanager.Config{
		Kind:        apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"),
		Subresource: "status",
		ResetFields: crdStatus.GetResetFields(),
		Scheme:      scheme.Scheme,
	})
	if err != nil {
		return fmt.Errorf("customresourcedefinitions/status field manager: %w", err)
	}
	ctrl := &controller{
		crds:         crdREST,
		status:       crdStatus,
		statusFields: statusFields,
		serving:      crs,
		resync:       cfg.Resync,
		synced:       sync.OnceFunc(func() { close(synced) }),
		logger:       logger.With("controller", "customresourcedefinitions"),

		openAPIMetrics: cfg.OpenAPIMetrics,
	}
	done := make(chan struct{})
	var started bool
	var mu sync.Mutex
	if err := s.AddPostStartHook(ControllersHook, func(ctx context.Context) error {
		mu.Lock()
		started = true
		mu.Unlock()
		go func() {
			defer close(done)
			ctrl.run(ctx) // ends when the HTTP server is told to stop
		}()
		return nil
	}); err != nil {
		return err
	}
	// As upstream's hook of this name: /readyz fails until the CRDs
	// stored at start are served, so that ready means served, after a
	// restart too. A stop before that ends the wait (the shutdown check
	// fails /readyz from then on).
	if err := s.AddPostStartHook(CRDInformerSyncedHook, func(ctx context.Context) error {
		select {
		case <-synced:
		case <-ctx.Done():
		}
		return nil
	}); err != nil {
		return err
	}
	// Destroy functions run in reverse order: the controller stops, then
	// the custom resources' storages go, then the CRDs' (added first).
	s.AddDestroyFunc(func() {
		mu.Lock()
		wait := started
		mu.Unlock()
		if wait {
			<-done
		}
		crs.closeAll()
	})
	return nil
}
