package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kapi-dev/kapi/pkg/auth/requestheader"
	"github.com/kapi-dev/kapi/pkg/controlplane"
	"github.com/kapi-dev/kapi/pkg/controlplane/allocator"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/tokenreview"
	"github.com/kapi-dev/kapi/pkg/openapi"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/version"
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
	installed, err := controlplane.Install(core, controlplane.Config{
		Storage:               c.StorageFactory(),
		Discovery:             c.Discovery,
		MinRequestTimeout:     time.Duration(c.Options.Run.MinRequestTimeout) * time.Second,
		Logger:                c.Logger,
		Metrics:               c.Metrics,
		AdmissionMetrics:      c.AdmissionMetrics,
		ServiceClusterIPRange: cidr,
		ServiceNodePortRange:  allocator.PortRange{Base: svc.NodePortRange.Base, Size: svc.NodePortRange.Size},
		PublicAddress:         public,
		SecurePort:            port,
		OnServices:            c.services.set,
		EventTTL:              c.Options.Run.EventTTL,
		Authorizer:            c.Authorizer,
		TokenAuthenticator:    tokenreview.FromRequest(c.Authenticator),
		// What aggregated API servers built on k8s.io/apiserver read to
		// trust this server's front proxy and client certificates.
		ExtensionAPIServerAuthentication: requestheader.AuthenticationConfigMapData(c.ClientCAPEM, c.RequestHeader, c.RequestHeaderCAPEM),
		StorageHealth:                    c.storageHealth(),
	})
	if err != nil {
		return fmt.Errorf("%s resources: %w", CoreName, err)
	}
	return publishOpenAPI(api, installed)
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

// publishOpenAPI adds each group-version's schemas: one v3 document per
// group-version (what kubectl explain and client-side validation read) and
// their definitions in the v2 document.
func publishOpenAPI(api *server.OpenAPI, installed []controlplane.Installed) error {
	defs := openapi.NewDefinitions()
	var all []schema.GroupVersionKind
	for _, gv := range installed {
		gvks := servedKinds(defs, gv.GroupVersion, gv.Resources)
		all = append(all, gvks...)
		schemas, err := defs.Schemas(gvks...)
		if err != nil {
			return fmt.Errorf("openapi v3 for %s: %w", gv.GroupVersion, err)
		}
		info := &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: version.Get().GitVersion}}
		doc, err := json.Marshal(openapi.NewDocumentV3(info, resourcePaths(defs, gv.GroupVersion, gv.Resources), schemas))
		if err != nil {
			return fmt.Errorf("encode openapi v3 for %s: %w", gv.GroupVersion, err)
		}
		api.SetV3(gvPath(gv.GroupVersion), doc)
	}
	v2, err := defs.SchemasV2(all...)
	if err != nil {
		return fmt.Errorf("openapi v2: %w", err)
	}
	definitions := make(map[string]any, len(v2))
	for k, v := range v2 {
		definitions[k] = v
	}
	api.MergeV2(nil, definitions)
	return nil
}

// servedKinds are the kinds (and their lists) of a group-version's main
// resources that have definitions.
func servedKinds(defs *openapi.Definitions, gv schema.GroupVersion, resources []metav1.APIResource) []schema.GroupVersionKind {
	seen := map[schema.GroupVersionKind]bool{}
	var out []schema.GroupVersionKind
	for _, r := range resources {
		if strings.Contains(r.Name, "/") || r.Kind == "" {
			continue
		}
		for _, kind := range []string{r.Kind, r.Kind + "List"} {
			gvk := gv.WithKind(kind)
			if _, ok := defs.NameForGVK(gvk); ok && !seen[gvk] {
				seen[gvk] = true
				out = append(out, gvk)
			}
		}
	}
	return out
}

// resourcePaths returns the read paths of each main resource (collection
// and item), each with a get operation naming its kind in
// x-kubernetes-group-version-kind: kubectl explain finds a resource's kind
// through them.
func resourcePaths(defs *openapi.Definitions, gv schema.GroupVersion, resources []metav1.APIResource) map[string]*spec3.Path {
	paths := map[string]*spec3.Path{}
	root := "/" + gvPath(gv)
	for _, r := range resources {
		if strings.Contains(r.Name, "/") || r.Kind == "" {
			continue
		}
		collection := root + "/" + r.Name
		if r.Namespaced {
			collection = root + "/namespaces/{namespace}/" + r.Name
		}
		gvk := map[string]any{"group": gv.Group, "version": gv.Version, "kind": r.Kind}
		for _, p := range []struct {
			path, action, kind string
		}{
			{collection, "list", r.Kind + "List"},
			{collection + "/{name}", "get", r.Kind},
		} {
			name, ok := defs.NameForGVK(gv.WithKind(p.kind))
			if !ok {
				continue
			}
			op := &spec3.Operation{
				OperationProps: spec3.OperationProps{
					OperationId: p.action + strings.ToUpper(r.Name[:1]) + r.Name[1:],
					Responses: &spec3.Responses{ResponsesProps: spec3.ResponsesProps{StatusCodeResponses: map[int]*spec3.Response{
						200: {ResponseProps: spec3.ResponseProps{Description: "OK", Content: map[string]*spec3.MediaType{
							"application/json": {MediaTypeProps: spec3.MediaTypeProps{Schema: spec.RefSchema("#/components/schemas/" + name)}},
						}}},
					}}},
				},
				VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{
					"x-kubernetes-action":             p.action,
					"x-kubernetes-group-version-kind": gvk,
				}},
			}
			paths[p.path] = &spec3.Path{PathProps: spec3.PathProps{Get: op}}
		}
	}
	return paths
}

func gvPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}
