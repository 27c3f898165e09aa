package pod

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// NodeGetter reads nodes: the nodes resource's storage.
type NodeGetter interface {
	Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error)
}

// preferredAddressTypes is kube-apiserver's default
// --kubelet-preferred-address-types.
var preferredAddressTypes = []corev1.NodeAddressType{
	corev1.NodeHostName, corev1.NodeInternalDNS, corev1.NodeInternalIP, corev1.NodeExternalDNS, corev1.NodeExternalIP,
}

// defaultKubeletPort is the kubelet's port when the node reports none
// (kube-apiserver's --kubelet-port).
const defaultKubeletPort = 10250

// dialTimeout bounds a connection attempt to a kubelet or a pod.
const dialTimeout = 10 * time.Second

// kubelets finds and reaches the kubelet of a node.
type kubelets struct {
	nodes NodeGetter
	// tls is the client TLS configuration for kubelets: kubelets' serving
	// certificates are not verified (kube-apiserver's behaviour without
	// --kubelet-certificate-authority).
	tls *tls.Config
}

func newKubelets(nodes NodeGetter) *kubelets {
	return &kubelets{nodes: nodes, tls: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}} //nolint:gosec // as kube-apiserver without a kubelet CA
}

// location is the kubelet URL (scheme and host) of node name: a NotFound
// for a node that does not exist, upstream's error for one without an
// address of a preferred type.
func (k *kubelets) location(ctx context.Context, name string) (*url.URL, error) {
	if k.nodes == nil {
		return nil, apierrors.NewNotFound(corev1.Resource("nodes"), name)
	}
	// Read the node as a request for nodes (errors name the nodes
	// resource), in no namespace.
	nctx := request.WithNamespace(ctx, "")
	nctx = request.WithRequestInfo(nctx, &request.RequestInfo{IsResourceRequest: true, APIPrefix: "api", APIVersion: "v1", Resource: "nodes", Verb: "get", Name: name})
	obj, err := k.nodes.Get(nctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	node, ok := obj.(*corev1.Node)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("not a node: %T", obj))
	}
	host := ""
	for _, t := range preferredAddressTypes {
		for _, a := range node.Status.Addresses {
			if a.Type == t {
				host = a.Address
				break
			}
		}
		if host != "" {
			break
		}
	}
	if host == "" {
		return nil, fmt.Errorf("no preferred addresses found; known addresses: %v", node.Status.Addresses)
	}
	port := int(node.Status.DaemonEndpoints.KubeletEndpoint.Port)
	if port <= 0 {
		port = defaultKubeletPort
	}
	return &url.URL{Scheme: "https", Host: net.JoinHostPort(host, strconv.Itoa(port))}, nil
}

// transport is an HTTP transport to kubelets.
func (k *kubelets) transport() *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: dialTimeout}).DialContext,
		TLSClientConfig:     k.tls.Clone(),
		TLSHandshakeTimeout: dialTimeout,
	}
}

// proxyHandler forwards a request to location, as upstream's
// UpgradeAwareHandler: an upgrade request (SPDY, WebSocket) is dialed and
// both connections are joined; other requests go through a reverse proxy,
// unless upgradeRequired (exec, attach, portforward), which answers 400.
type proxyHandler struct {
	location        *url.URL
	transport       *http.Transport
	upgradeRequired bool
	fail            rest.ErrorWriter
}

func isUpgradeRequest(req *http.Request) bool {
	for _, v := range req.Header.Values("Connection") {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), "upgrade") {
				return true
			}
		}
	}
	return false
}

func (h *proxyHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if isUpgradeRequest(req) {
		h.serveUpgrade(w, req)
		return
	}
	if h.upgradeRequired {
		h.fail(w, req, apierrors.NewBadRequest("Upgrade request required"))
		return
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme = h.location.Scheme
			r.Out.URL.Host = h.location.Host
			r.Out.URL.Path = h.location.Path
			r.Out.URL.RawPath = ""
			r.Out.URL.RawQuery = h.location.RawQuery
			r.Out.Host = h.location.Host
		},
		Transport:     h.transport,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
			h.fail(w, req, err)
		},
	}
	rp.ServeHTTP(w, req)
}

// serveUpgrade dials the backend, sends it the request and, when it
// switches protocols, joins the client's connection to it.
func (h *proxyHandler) serveUpgrade(w http.ResponseWriter, req *http.Request) {
	ctx := req.Context()
	out := req.Clone(ctx)
	out.URL = &url.URL{Scheme: h.location.Scheme, Host: h.location.Host, Path: h.location.Path, RawQuery: h.location.RawQuery}
	out.Host = h.location.Host
	out.RequestURI = ""
	backend, err := h.dial(ctx)
	if err != nil {
		h.fail(w, req, fmt.Errorf("error dialing backend: %w", err))
		return
	}
	defer backend.Close()
	if err := out.Write(backend); err != nil {
		h.fail(w, req, fmt.Errorf("error sending request: %w", err))
		return
	}
	br := bufio.NewReader(backend)
	resp, err := http.ReadResponse(br, out)
	if err != nil {
		h.fail(w, req, fmt.Errorf("error reading response: %w", err))
		return
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer resp.Body.Close()
		for k, vs := range resp.Header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		h.fail(w, req, errors.New("unable to upgrade: the connection cannot be hijacked"))
		return
	}
	client, cbuf, err := hj.Hijack()
	if err != nil {
		h.fail(w, req, fmt.Errorf("unable to upgrade: %w", err))
		return
	}
	defer client.Close()
	if err := resp.Write(client); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(backend, io.MultiReader(bufferedReader(cbuf.Reader), client))
		if c, ok := backend.(interface{ CloseWrite() error }); ok {
			_ = c.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(client, br)
		if c, ok := client.(interface{ CloseWrite() error }); ok {
			_ = c.CloseWrite()
		}
		done <- struct{}{}
	}()
	<-done
	<-done
}

// bufferedReader is what a hijacked connection's reader already holds.
func bufferedReader(r *bufio.Reader) io.Reader {
	n := r.Buffered()
	if n == 0 {
		return strings.NewReader("")
	}
	b, _ := r.Peek(n)
	return strings.NewReader(string(b))
}

func (h *proxyHandler) dial(ctx context.Context) (net.Conn, error) {
	host := h.location.Host
	if h.location.Port() == "" {
		port := "80"
		if h.location.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(h.location.Hostname(), port)
	}
	d := &net.Dialer{Timeout: dialTimeout}
	if h.location.Scheme != "https" {
		return d.DialContext(ctx, "tcp", host)
	}
	cfg := h.transport.TLSClientConfig.Clone()
	if cfg == nil {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if cfg.ServerName == "" {
		cfg.ServerName = h.location.Hostname()
	}
	// The upgraded connection speaks HTTP/1.1.
	cfg.NextProtos = []string{"http/1.1"}
	td := &tls.Dialer{NetDialer: d, Config: cfg}
	return td.DialContext(ctx, "tcp", host)
}
