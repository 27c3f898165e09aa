package app

import (
	"context"
	"fmt"

	"github.com/kapi-dev/kapi/pkg/endpoints/discovery"
	"github.com/kapi-dev/kapi/pkg/server"
)

// The MuxAndDiscoveryComplete signals of the chain, named as upstream.
const (
	crdInformerSyncedSignal   = "CRDInformerHasNotSynced"
	apiServiceRegistrationSig = "APIServiceRegistrationControllerInitiated"
)

// installAPIExtensions sets up the apiextensions server. It serves no CRDs
// yet (issue 5); its mux signal fires from the crd-informer-synced hook,
// which is where upstream fires it once the CRD informer has synced and
// every CRD's routes are installed.
func installAPIExtensions(s *server.GenericServer) error {
	synced := make(chan struct{})
	if err := s.RegisterMuxAndDiscoveryCompleteSignal(crdInformerSyncedSignal, synced); err != nil {
		return fmt.Errorf("%s: %w", APIExtensionsName, err)
	}
	return s.AddPostStartHook("crd-informer-synced", func(context.Context) error {
		close(synced)
		return nil
	})
}

// installAggregator sets up the aggregator. It proxies no APIServices yet
// (issue 6); its mux signal fires from the apiservice-registration-controller
// hook, as upstream fires it once that controller has installed the routes
// of every known APIService.
func installAggregator(s *server.GenericServer, api *server.OpenAPI, disc *discovery.Manager) error {
	s.SetOpenAPI(api)
	disc.Install(s.Handler())
	initiated := make(chan struct{})
	if err := s.RegisterMuxAndDiscoveryCompleteSignal(apiServiceRegistrationSig, initiated); err != nil {
		return fmt.Errorf("%s: %w", AggregatorName, err)
	}
	return s.AddPostStartHook("apiservice-registration-controller", func(context.Context) error {
		close(initiated)
		return nil
	})
}
