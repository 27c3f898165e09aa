package kubelet

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
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

// Client finds and reaches the kubelet of a node.
type Client struct {
	nodes NodeGetter
	// tls is the client TLS configuration for kubelets: kubelets' serving
	// certificates are not verified (kube-apiserver's behaviour without
	// --kubelet-certificate-authority).
	tls *tls.Config
}

// NewClient returns the Client reading nodes from nodes (nil: every node
// is missing).
func NewClient(nodes NodeGetter) *Client {
	return &Client{nodes: nodes, tls: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}} //nolint:gosec // as kube-apiserver without a kubelet CA
}

// Location is the kubelet URL (scheme and host) of node name: a NotFound
// for a node that does not exist, upstream's error for one without an
// address of a preferred type.
func (k *Client) Location(ctx context.Context, name string) (*url.URL, error) {
	if k.nodes == nil {
		return nil, apierrors.NewNotFound(corev1.Resource("nodes"), name)
	}
	// Read the node in no namespace, under the caller's request: as
	// upstream's node getter reads it with the request's context, a
	// missing node is named by the request's resource (kube-apiserver
	// v1.37.2 answers `kubectl logs` of a pod whose node is gone with
	// 404 `pods "NODE" not found`, details kind "pods").
	obj, err := k.nodes.Get(request.WithNamespace(ctx, ""), name, &metav1.GetOptions{})
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

// Transport is an HTTP transport to kubelets.
func (k *Client) Transport() *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: dialTimeout}).DialContext,
		TLSClientConfig:     k.tls.Clone(),
		TLSHandshakeTimeout: dialTimeout,
	}
}
