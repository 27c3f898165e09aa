package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/kubelet"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// ProxyREST serves nodes/proxy (upstream's node ProxyREST): a request to
// nodes/{[scheme:]name[:port]}/proxy/{path} goes to the node's kubelet
// (its preferred address and kubelet port, https) or, for another port, to
// that port of the same address (http unless the name says https). As
// upstream: a name that does not parse is 400, a missing node 404, a node
// without an address of a preferred type upstream's error, an address
// that is not a global unicast IP (loopback, link-local) 400 "address not
// allowed", and a kubelet that does not answer fails as the proxy fails.
type ProxyREST struct {
	kubelet *kubelet.Client
	// proxyable checks that a host may be proxied to (upstream's
	// isProxyableHostname); tests replace it to reach a kubelet on
	// loopback.
	proxyable func(ctx context.Context, host string) error
}

var _ rest.SubpathConnecter = (*ProxyREST)(nil)

// NewProxyREST returns nodes/proxy, reading nodes from nodes.
func NewProxyREST(nodes kubelet.NodeGetter) *ProxyREST {
	return &ProxyREST{kubelet: kubelet.NewClient(nodes), proxyable: proxyableHost}
}

// New implements rest.Storage.
func (*ProxyREST) New() runtime.Object { return &corev1.NodeProxyOptions{} }

// Destroy implements rest.Storage: the storage is the nodes resource's.
func (*ProxyREST) Destroy() {}

// ConnectSubpath implements rest.SubpathConnecter:
// nodes/{name}/proxy/{path}.
func (*ProxyREST) ConnectSubpath() bool { return true }

// ConnectMethods implements rest.Connecter: upstream's proxy methods.
func (*ProxyREST) ConnectMethods() []string {
	return []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead, http.MethodOptions}
}

// Connect implements rest.Connecter.
func (r *ProxyREST) Connect(ctx context.Context, id string, req *http.Request, fail rest.ErrorWriter) (http.Handler, error) {
	scheme, name, port, ok := kubelet.SplitSchemeNamePort(id)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid node request %q", id))
	}
	loc, err := r.kubelet.Location(ctx, name)
	if err != nil {
		return nil, err
	}
	host := loc.Hostname()
	if err := r.proxyable(ctx, host); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	transport := r.kubelet.Transport()
	if port != "" && port != loc.Port() {
		// Another port of the node: the requested scheme (upstream
		// leaves an empty one empty, which no transport takes; http
		// here), no kubelet credentials.
		if scheme == "" {
			scheme = "http"
		}
		loc = &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}
		transport = &http.Transport{TLSClientConfig: transport.TLSClientConfig, TLSHandshakeTimeout: transport.TLSHandshakeTimeout, DialContext: transport.DialContext}
	}
	loc.Path = kubelet.ProxyPath(req)
	loc.RawQuery = req.URL.RawQuery
	return &kubelet.ProxyHandler{Location: loc, Transport: transport, Fail: fail}, nil
}

// proxyableHost is upstream's isProxyableHostname: host must resolve, and
// only to global unicast addresses (kube-apiserver never proxies to
// loopback, link-local or unspecified addresses). An IP address resolves
// to itself without a lookup.
func proxyableHost(ctx context.Context, host string) error {
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return err
	}
	if len(addrs) == 0 {
		return errors.New("no addresses for hostname")
	}
	for _, a := range addrs {
		if !a.IP.IsGlobalUnicast() {
			return errors.New("address not allowed")
		}
	}
	return nil
}
