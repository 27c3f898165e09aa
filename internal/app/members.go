package app

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kapi-dev/kapi/pkg/aggregator"
	"github.com/kapi-dev/kapi/pkg/aggregator/remote"
	"github.com/kapi-dev/kapi/pkg/controlplane"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/webhook/serviceresolver"
)

// serviceResolver resolves Service references (the aggregator's
// APIServices, CRD conversion webhooks) through the core server's
// Services and EndpointSlices. The apiextensions server is built before
// the core server, so the lister arrives late: until then (never while
// serving) resolution fails.
type serviceResolver struct {
	mu     sync.RWMutex
	lister serviceresolver.Lister
	stores controlplane.ServiceStores
}

func (r *serviceResolver) set(s controlplane.ServiceStores) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lister, r.stores = s.Reader(), s
}

func (r *serviceResolver) serviceStores() controlplane.ServiceStores {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.stores
}

func (r *serviceResolver) get() (serviceresolver.Lister, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.lister == nil {
		return nil, fmt.Errorf("services are not served yet")
	}
	return r.lister, nil
}

var _ serviceresolver.Lister = (*serviceResolver)(nil)

func (r *serviceResolver) GetService(ctx context.Context, namespace, name string) (*corev1.Service, error) {
	l, err := r.get()
	if err != nil {
		return nil, err
	}
	return l.GetService(ctx, namespace, name)
}

func (r *serviceResolver) GetEndpoints(ctx context.Context, namespace, name string) (*corev1.Endpoints, error) {
	l, err := r.get()
	if err != nil {
		return nil, err
	}
	return l.GetEndpoints(ctx, namespace, name)
}

func (r *serviceResolver) ListEndpointSlices(ctx context.Context, namespace, service string) ([]discoveryv1.EndpointSlice, error) {
	l, err := r.get()
	if err != nil {
		return nil, err
	}
	return l.ListEndpointSlices(ctx, namespace, service)
}

// ResolveEndpoint returns the URL that reaches the service namespace/name
// on its port port: one ready endpoint (what kube-apiserver does with
// --enable-aggregator-routing), or for an ExternalName service its
// external name and port (see package serviceresolver).
func (r *serviceResolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	l, err := r.get()
	if err != nil {
		return nil, err
	}
	return serviceresolver.Resolve(context.Background(), l, namespace, name, port)
}

// installAggregator makes s the aggregator: it serves the OpenAPI
// documents and discovery of the whole chain, apiservices, a local
// APIService per group-version of the servers behind it, proxies to
// aggregated API servers and merges their discovery and OpenAPI. It must
// run after the servers behind it installed their group-versions.
func (c *Config) installAggregator(s *server.GenericServer, api *server.OpenAPI, services *serviceResolver) error {
	s.SetOpenAPI(api)
	c.Discovery.Install(s.Handler().NonRESTMux)

	// The remote controller is built after the aggregator (it fetches
	// through the aggregator's transports); the aggregator tells it of
	// changes only once its hooks run, after both exist.
	var backends *remote.Controller
	serviceChanges := make(chan types.NamespacedName, 16)
	agg, err := aggregator.Install(s, aggregator.Config{
		Admission:          c.Admission,
		Storage:            c.StorageFactory(),
		Discovery:          c.Discovery,
		Services:           services,
		ProxyClientCert:    c.ProxyClientCert,
		MinRequestTimeout:  time.Duration(c.Options.Run.MinRequestTimeout) * time.Second,
		AvailabilityPeriod: c.Options.APIServiceAvailabilityPeriod,
		ServiceChanges:     serviceChanges,
		OnChange:           func(all []*apiregistrationv1.APIService) { backends.Sync(all) },
		Logger:             c.Logger,
		Metrics:            c.Metrics,
		MetricsRegistry:    c.Generic.MetricsRegistry,
	})
	if err != nil {
		return fmt.Errorf("%s: %w", AggregatorName, err)
	}
	if backends, err = remote.New(remote.Config{Discovery: c.Discovery, OpenAPI: api, Targets: agg, Logger: c.Logger}); err != nil {
		return fmt.Errorf("%s: %w", AggregatorName, err)
	}
	var wg sync.WaitGroup
	if err := s.AddPostStartHook("apiservice-discovery-controller", func(ctx context.Context) error {
		wg.Add(2)
		go func() {
			defer wg.Done()
			backends.Run(ctx)
		}()
		// Service and EndpointSlice changes reach the availability
		// controller at once (it also probes periodically).
		go func() {
			defer wg.Done()
			st := services.serviceStores()
			if st.Services == nil || st.EndpointSlices == nil {
				return
			}
			watchServiceChanges(ctx, st.Services, st.EndpointSlices, serviceChanges, c.Logger)
		}()
		return nil
	}); err != nil {
		return fmt.Errorf("%s: %w", AggregatorName, err)
	}
	s.AddDestroyFunc(wg.Wait)
	if err := s.AddBootSequenceHealthChecks(agg.AutoregisterCompletion()); err != nil {
		return fmt.Errorf("%s: %w", AggregatorName, err)
	}
	publishOpenAPI(api, []controlplane.Installed{{GroupVersion: apiregistrationv1.SchemeGroupVersion, Resources: agg.Resources()}})
	return nil
}
