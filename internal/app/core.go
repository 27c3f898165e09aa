package app

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/kapi-dev/kapi/pkg/auth/requestheader"
	"github.com/kapi-dev/kapi/pkg/controlplane"
	"github.com/kapi-dev/kapi/pkg/controlplane/allocator"
	"github.com/kapi-dev/kapi/pkg/openapi"
	"github.com/kapi-dev/kapi/pkg/server"
)

// installCoreResources serves the built-in resources on the core server
// and publishes their discovery and OpenAPI documents at the head.
func (c *Config) installCoreResources(core *server.GenericServer, api *server.OpenAPI) error {
	svc := c.Options.Services
	cidr, err := svc.ClusterIPPrefix()
	if err != nil {
		return err
	}
	public, port, err := c.advertised()
	if err != nil {
		return err
	}
	admissionPlugins, err := c.Options.Admission.Selection()
	if err != nil {
		return err
	}
	installed, err := controlplane.Install(core, controlplane.Config{
		Storage:               c.StorageFactory(),
		Discovery:             c.Discovery,
		MinRequestTimeout:     time.Duration(c.Options.Run.MinRequestTimeout) * time.Second,
		Logger:                c.Logger,
		Metrics:               c.Metrics,
		Admission:             c.Admission,
		AdmissionPlugins:      admissionPlugins,
		WebhookMetrics:        c.WebhookMetrics,
		WebhookX509:           c.WebhookX509,
		PodSecurityMetrics:    c.PodSecurityMetrics,
		LoopbackClientConfig:  c.loopbackClientConfig,
		ServiceClusterIPRange: cidr,
		ServiceNodePortRange:  allocator.PortRange{Base: svc.NodePortRange.Base, Size: svc.NodePortRange.Size},
		AllocatorMetrics:      c.AllocatorMetrics,
		PublicAddress:         public,
		SecurePort:            port,
		OnServices:            c.services.set,
		EventTTL:              c.Options.Run.EventTTL,
		Authorizer:            c.Authorizer,
		CustomResources:       &c.customResources,
		RBAC:                  c.RBAC,
		RuleResolver:          c.RuleResolver,
		TokenAuthenticator:    c.authn.tokens,
		// serviceaccounts/<name>/token, and the objects tokens name for
		// the service-account token authenticator.
		ServiceAccountTokens:    c.authn.tokenConfig(c),
		OnServiceAccountObjects: c.authn.objects.set,
		// What aggregated API servers built on k8s.io/apiserver read to
		// trust this server's front proxy and client certificates.
		ExtensionAPIServerAuthentication: requestheader.AuthenticationConfigMapData(c.ClientCAPEM, c.RequestHeader, c.RequestHeaderCAPEM),
		StorageHealth:                    c.storageHealth(),
	})
	if err != nil {
		return fmt.Errorf("%s resources: %w", CoreName, err)
	}
	// After Install's hooks, as upstream adds these after
	// start-cluster-authentication-info-controller.
	if err := c.installKubeSystemControllers(core); err != nil {
		return fmt.Errorf("%s: %w", CoreName, err)
	}
	publishOpenAPI(api, installed)
	// The roots the core server serves besides its groups' (upstream's
	// kube-apiserver publishes them; /apis/ and /version/ are the whole
	// chain's).
	roots := []openapi.Root{openapi.LegacyRoot(), openapi.GroupsRoot(), openapi.VersionRoot()}
	if c.authn.installDiscovery(core) {
		roots = append(roots, openapi.ServiceAccountIssuerRoots()...)
	}
	openapi.PublishRoots(api, openapi.Default, roots...)
	return nil
}

// storageHealth is the etcd health check of the chain's storage, nil on
// the memory backend.
func (c *Config) storageHealth() func(context.Context) error {
	if c.storage == nil {
		return nil
	}
	return c.storage.health
}

// advertised is the address and port the "kubernetes" Service's endpoints
// carry: --advertise-address, else --bind-address (loopback when that is
// unspecified), and the port actually bound.
func (c *Config) advertised() (net.IP, int, error) {
	host, portStr, err := net.SplitHostPort(serverHost(c.Address))
	if err != nil {
		return nil, 0, fmt.Errorf("listener address %q: %w", c.Address, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, 0, fmt.Errorf("listener port %q: %w", portStr, err)
	}
	ip := net.ParseIP(host)
	if a := c.Options.Services.AdvertiseAddress; a != "" {
		ip = net.ParseIP(a)
	}
	return ip, port, nil
}

// publishOpenAPI publishes each group-version's operations and schemas:
// one v3 document per group-version (what kubectl explain, client-side
// validation and kubectl's server-side field validation check read) and
// their part of the v2 document, built by pkg/openapi when first asked for.
func publishOpenAPI(api *server.OpenAPI, installed []controlplane.Installed) {
	groups := make([]openapi.GroupVersionResources, 0, len(installed))
	for _, gv := range installed {
		resources := gv.OpenAPI
		if resources == nil {
			resources = openapi.ResourcesOf(gv.GroupVersion, gv.Resources)
		}
		groups = append(groups, openapi.GroupVersionResources{GroupVersion: gv.GroupVersion, Resources: resources})
	}
	openapi.PublishGroupVersions(api, openapi.Default, openapi.KubernetesInfo(), groups)
	// Each group's root (/apis/<group>/) has its document too.
	var roots []openapi.Root
	seen := map[string]bool{}
	for _, gv := range installed {
		if g := gv.GroupVersion.Group; g != "" && !seen[g] {
			seen[g] = true
			roots = append(roots, openapi.GroupRoot(g))
		}
	}
	openapi.PublishRoots(api, openapi.Default, roots...)
}
