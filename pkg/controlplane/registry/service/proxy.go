package service

import (
	"context"
	"crypto/tls"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/kubelet"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// EndpointSliceLister lists the EndpointSlices of a Service (Reader is
// one).
type EndpointSliceLister interface {
	ListEndpointSlices(ctx context.Context, namespace, service string) ([]discoveryv1.EndpointSlice, error)
}

// ProxyREST serves services/proxy, as upstream's service ProxyREST and
// REST.ResourceLocation (kubernetes/pkg/registry/core/service, v1.37.2):
// services/{[scheme:]name[:port]}/proxy/{path} goes to a random ready
// endpoint of the service, from its EndpointSlices, on the slice port
// named port (a port number is first mapped to its service port's name;
// no port means the unnamed port). Only endpoints that are pods of the
// namespace with that address are used. Errors as upstream: a name that
// does not parse is 400 "invalid service request", a port number the
// service does not declare 503 "no service port N found for service",
// no usable endpoint 503 "no endpoints available for service".
type ProxyREST struct {
	services  rest.Getter
	slices    EndpointSliceLister
	pods      rest.Getter
	family    corev1.IPFamily
	transport *http.Transport
}

var _ rest.SubpathConnecter = (*ProxyREST)(nil)

// NewProxyREST returns services/proxy on the services resource svcs, the
// service's EndpointSlices and the pods resource (nil: no endpoint is
// usable, every request is 503 as upstream without a slice lister).
func NewProxyREST(svcs *REST, slices EndpointSliceLister, pods rest.Getter) *ProxyREST {
	return &ProxyREST{
		services: svcs, slices: slices, pods: pods, family: svcs.alloc.family(),
		// Upstream's proxy transport (CreateProxyTransport): endpoints
		// are addressed by IP, so their certificates are not verified.
		transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // as upstream, see above
			TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConnsPerHost: 25,
		},
	}
}

// New implements rest.Storage.
func (*ProxyREST) New() runtime.Object { return &corev1.ServiceProxyOptions{} }

// Destroy implements rest.Storage: the storage is the services resource's.
func (*ProxyREST) Destroy() {}

// ConnectSubpath implements rest.SubpathConnecter:
// services/{name}/proxy/{path}.
func (*ProxyREST) ConnectSubpath() bool { return true }

// ConnectMethods implements rest.Connecter: upstream's proxy methods.
func (*ProxyREST) ConnectMethods() []string {
	return []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead, http.MethodOptions}
}

// Connect implements rest.Connecter.
func (r *ProxyREST) Connect(ctx context.Context, id string, req *http.Request, fail rest.ErrorWriter) (http.Handler, error) {
	loc, err := r.location(ctx, id)
	if err != nil {
		return nil, err
	}
	loc.Path = kubelet.ProxyPath(req)
	loc.RawQuery = req.URL.RawQuery
	return &kubelet.ProxyHandler{Location: loc, Transport: r.transport, Fail: fail}, nil
}

// location picks the endpoint id ("name", "name:port" or
// "scheme:name:port") is proxied to.
func (r *ProxyREST) location(ctx context.Context, id string) (*url.URL, error) {
	scheme, name, port, ok := utilnet.SplitSchemeNamePort(id)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid service request %q", id))
	}
	if n, err := strconv.ParseInt(port, 10, 64); err == nil {
		obj, err := r.services.Get(ctx, name, &metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		found := false
		for _, p := range obj.(*corev1.Service).Spec.Ports {
			if int64(p.Port) == n {
				port, found = p.Name, true
				break
			}
		}
		if !found {
			return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", n, name))
		}
	}
	noEndpoints := apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", name))
	if r.slices == nil || r.pods == nil {
		return nil, noEndpoints
	}
	namespace := request.NamespaceFrom(ctx)
	if namespace == "" {
		return nil, apierrors.NewBadRequest("missing required namespace")
	}
	list, err := r.slices.ListEndpointSlices(ctx, namespace, name)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	hostPort, ok := r.pickEndpoint(ctx, namespace, list, port)
	if !ok {
		return nil, noEndpoints
	}
	if scheme == "" {
		// Upstream leaves it empty; its proxy then speaks http.
		scheme = "http"
	}
	return &url.URL{Scheme: scheme, Host: hostPort}, nil
}

// pickEndpoint is upstream's RandomEndpoint (k8s.io/apiserver
// pkg/util/proxy): the slices of the service CIDR's primary family first,
// in random order; in each slice that has the port, a ready endpoint from a
// random start, skipping endpoints that are not pods of the namespace
// with that address.
func (r *ProxyREST) pickEndpoint(ctx context.Context, namespace string, list []discoveryv1.EndpointSlice, port string) (string, bool) {
	order := rand.Perm(len(list))
	preferred := discoveryv1.AddressType(r.family)
	idx := make([]int, len(list))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		pa, pb := list[a].AddressType == preferred, list[b].AddressType == preferred
		switch {
		case pa && !pb:
			return -1
		case pb && !pa:
			return 1
		}
		return order[a] - order[b]
	})
	for _, si := range idx {
		s := &list[si]
		for _, p := range s.Ports {
			if p.Name == nil || *p.Name != port || p.Port == nil || len(s.Endpoints) == 0 {
				continue
			}
			start := rand.IntN(len(s.Endpoints))
			for k := range s.Endpoints {
				ep := &s.Endpoints[(k+start)%len(s.Endpoints)]
				if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
					continue
				}
				if !r.isPodAddress(ctx, namespace, ep) {
					continue
				}
				return net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(*p.Port))), true
			}
		}
	}
	return "", false
}

// isPodAddress is upstream's isValidAddress: the endpoint refers to a pod
// of namespace whose status lists the endpoint's (first) address.
func (r *ProxyREST) isPodAddress(ctx context.Context, namespace string, ep *discoveryv1.Endpoint) bool {
	if ep.TargetRef == nil || ep.TargetRef.Namespace != namespace || len(ep.Addresses) == 0 {
		return false
	}
	obj, err := r.pods.Get(ctx, ep.TargetRef.Name, &metav1.GetOptions{})
	if err != nil {
		return false
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return false
	}
	for _, ip := range pod.Status.PodIPs {
		if ip.IP == ep.Addresses[0] {
			return true
		}
	}
	return false
}
