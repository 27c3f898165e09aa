package conversion

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/webhook/serviceresolver"
)

// maxErrorBodyBytes bounds how much of a non-JSON error answer goes into
// an error message (client-go's limit).
const maxErrorBodyBytes = 2048

// hookClient posts ConversionReviews to one webhook.
type hookClient struct {
	client    *http.Client
	transport *http.Transport // the innermost transport, for idle connections
	url       string          // with the timeout query
	maxBytes  int64
}

// newHookClient builds the client of a CRD's webhook; name is the
// webhook's name in errors ("conversion_webhook_for_<crd>").
func newHookClient(name string, cc *apiextensionsv1.WebhookClientConfig, opts Options) (*hookClient, error) {
	if cc == nil || (cc.URL == nil && cc.Service == nil) {
		return nil, fmt.Errorf("failed calling webhook %q: webhook configuration must have either service or URL", name)
	}
	if cc.URL != nil && cc.Service != nil {
		return nil, fmt.Errorf("failed calling webhook %q: webhook configuration must have either service or URL, not both", name)
	}
	tlsConfig := &tls.Config{}
	// A whitespace-only caBundle counts as empty: system roots.
	if len(bytes.TrimSpace(cc.CABundle)) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cc.CABundle) {
			return nil, fmt.Errorf("webhook %q: unable to load root certificates: unable to parse bytes as PEM block", name)
		}
		tlsConfig.RootCAs = pool
	}
	// net/http's defaults, without sharing http.DefaultTransport.
	transport := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   25, // client-go's default
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		TLSClientConfig:       tlsConfig,
	}

	query := url.Values{"timeout": []string{opts.Timeout.String()}}.Encode()
	var u url.URL
	var rt http.RoundTripper = transport
	switch {
	case cc.URL != nil:
		parsed, err := parseHookURL(*cc.URL)
		if err != nil {
			return nil, fmt.Errorf("failed calling webhook %q: %w", name, err)
		}
		u = url.URL{Scheme: "https", Host: parsed.Host, Path: path.Join("/", parsed.Path), RawQuery: query}
		// As upstream: HTTP/2 to loopback hosts only.
		if isLoopback(parsed.Hostname()) {
			transport.ForceAttemptHTTP2 = true
		} else {
			transport.ForceAttemptHTTP2 = false
			tlsConfig.NextProtos = []string{"http/1.1"}
		}
	default:
		svc := cc.Service
		if svc.Name == "" || svc.Namespace == "" {
			return nil, fmt.Errorf("failed calling webhook %q: service reference needs a name and a namespace", name)
		}
		if opts.ServiceResolver == nil {
			return nil, fmt.Errorf("failed calling webhook %q: service %s/%s cannot be resolved: no ServiceResolver", name, svc.Namespace, svc.Name)
		}
		port := int32(443)
		if svc.Port != nil && *svc.Port != 0 {
			port = *svc.Port
		}
		serverName := serviceresolver.ServerName(svc.Namespace, svc.Name)
		host := serviceresolver.HostPort(svc.Namespace, svc.Name, port)
		p := "/"
		if svc.Path != nil {
			p = path.Join("/", *svc.Path)
		}
		u = url.URL{Scheme: "https", Host: host, Path: p, RawQuery: query}
		tlsConfig.ServerName = serverName
		transport.ForceAttemptHTTP2 = false
		tlsConfig.NextProtos = []string{"http/1.1"}
		rt = &serviceresolver.RoundTripper{Next: transport, Resolver: opts.ServiceResolver, Namespace: svc.Namespace, Name: svc.Name, Port: port}
	}
	// Outside the service resolution, as upstream's wrapper is outside its
	// dialer: annotations name the URL's host (<service>.<namespace>.svc).
	rt = opts.X509.Wrap(rt)
	return &hookClient{
		client:    &http.Client{Transport: rt, Timeout: opts.Timeout},
		transport: transport,
		url:       u.String(),
		maxBytes:  opts.MaxResponseBytes,
	}, nil
}

// parseHookURL checks a webhook URL as CRD validation does upstream.
func parseHookURL(s string) (*url.URL, error) {
	const form = "; desired format: https://host[/path]"
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return nil, fmt.Errorf("url must be a valid URL: %w%s", err, form)
	case u.Scheme != "https":
		return nil, fmt.Errorf("invalid URL scheme %q: 'https' is the only allowed URL scheme%s", u.Scheme, form)
	case u.Host == "":
		return nil, fmt.Errorf("invalid URL: host must be specified%s", form)
	case u.User != nil:
		return nil, errors.New("invalid URL: user information is not permitted in the URL")
	case u.Fragment != "":
		return nil, errors.New("invalid URL: fragments are not permitted in the URL")
	case u.RawQuery != "":
		return nil, errors.New("invalid URL: query parameters are not permitted in the URL")
	}
	return u, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// post sends body and returns the answer's body. Transport errors are
// returned as net/http gives them (Post "<url>": ...); HTTP errors as
// client-go words them.
func (c *hookClient) post(ctx context.Context, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, */*")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read webhook response: %w", err)
	}
	if int64(len(data)) > c.maxBytes {
		return nil, fmt.Errorf("webhook response is larger than %d bytes", c.maxBytes)
	}
	if resp.StatusCode < http.StatusOK || resp.StatusCode > http.StatusPartialContent {
		return nil, httpError(resp, data)
	}
	return data, nil
}

// httpError words an unsuccessful answer as client-go does: a
// metav1.Status of status Failure in the body gives its message, anything
// else a generic text for the code.
func httpError(resp *http.Response, data []byte) error {
	var st metav1.Status
	if json.Unmarshal(data, &st) == nil && st.Kind == "Status" && st.Status == metav1.StatusFailure {
		return apierrors.FromObject(&st)
	}
	msg := "unknown"
	if isText(resp.Header.Get("Content-Type")) {
		if len(data) > maxErrorBodyBytes {
			data = data[:maxErrorBodyBytes]
		}
		msg = strings.TrimSpace(string(data))
	}
	retryAfter, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	return apierrors.NewGenericServerResponse(resp.StatusCode, http.MethodPost, schema.GroupResource{}, "", msg, retryAfter, true)
}

func isText(contentType string) bool {
	if contentType == "" {
		return true
	}
	media, _, err := mime.ParseMediaType(contentType)
	return err == nil && strings.HasPrefix(media, "text/")
}

func (c *hookClient) closeIdleConnections() { c.transport.CloseIdleConnections() }
