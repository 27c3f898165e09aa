package app

import (
	"context"
	"fmt"

	"github.com/kapi-dev/kapi/pkg/endpoints/discovery"
	"github.com/kapi-dev/kapi/pkg/server"
)

// The MuxAndDiscoveryComplete signals of the chain, named as upstream.
const (
	apiServiceRegistrationSig = "APIServiceRegistrationControllerInitiated"
)

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
