package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/kapi-dev/kapi/pkg/webhook/serviceresolver"
	"github.com/kapi-dev/kapi/pkg/webhook/x509metrics"
)

// maxResponseBytes bounds a webhook's answer (upstream reads at most 3 MiB
// more than the largest request it sends; kapi bounds the answer itself).
const maxResponseBytes = 6 << 20

// clients caches one HTTP client per webhook configuration version.
type clients struct {
	resolver serviceresolver.EndpointResolver
	x509     *x509metrics.Counters
	mu       sync.Mutex
	byKey    map[string]*hookClient
}

type hookClient struct {
	client    *http.Client
	transport *http.Transport
	url       string
}

func (c *clients) get(h *Hook) (*hookClient, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if hc, ok := c.byKey[h.key]; ok {
		return hc, nil
	}
	hc, err := c.build(h)
	if err != nil {
		return nil, err
	}
	if c.byKey == nil {
		c.byKey = map[string]*hookClient{}
	}
	// Old versions of a configuration are dropped with their idle
	// connections.
	prefix := h.key[:strings.Index(h.key, "/")+1]
	for k, old := range c.byKey {
		if strings.HasPrefix(k, prefix) && strings.HasSuffix(k, "/"+h.Name) && k != h.key {
			old.transport.CloseIdleConnections()
			delete(c.byKey, k)
		}
	}
	c.byKey[h.key] = hc
	return hc, nil
}

func (c *clients) build(h *Hook) (*hookClient, error) {
	cc := h.ClientConfig
	if (cc.URL == nil) == (cc.Service == nil) {
		return nil, errors.New("webhook configuration must have either service or URL")
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(bytes.TrimSpace(cc.CABundle)) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cc.CABundle) {
			return nil, errors.New("unable to load root certificates: unable to parse bytes as PEM block")
		}
		tlsConfig.RootCAs = pool
	}
	transport := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 25,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		TLSClientConfig:     tlsConfig,
	}
	var u url.URL
	var rt http.RoundTripper = transport
	if cc.URL != nil {
		parsed, err := url.Parse(*cc.URL)
		if err != nil {
			return nil, fmt.Errorf("invalid webhook URL: %w", err)
		}
		if parsed.Scheme != "https" || parsed.Host == "" {
			return nil, fmt.Errorf("invalid webhook URL %q: 'https' is the only allowed URL scheme", *cc.URL)
		}
		u = *parsed
		transport.ForceAttemptHTTP2 = isLoopback(parsed.Hostname())
		if !transport.ForceAttemptHTTP2 {
			tlsConfig.NextProtos = []string{"http/1.1"}
		}
	} else {
		svc := cc.Service
		if c.resolver == nil {
			return nil, fmt.Errorf("service %s/%s cannot be resolved: no service resolver", svc.Namespace, svc.Name)
		}
		port := int32(443)
		if svc.Port != nil && *svc.Port != 0 {
			port = *svc.Port
		}
		p := "/"
		if svc.Path != nil {
			p = path.Join("/", *svc.Path)
		}
		u = url.URL{Scheme: "https", Host: serviceresolver.HostPort(svc.Namespace, svc.Name, port), Path: p}
		tlsConfig.ServerName = serviceresolver.ServerName(svc.Namespace, svc.Name)
		tlsConfig.NextProtos = []string{"http/1.1"}
		rt = &serviceresolver.RoundTripper{Next: transport, Resolver: c.resolver, Namespace: svc.Namespace, Name: svc.Name, Port: port}
	}
	// Outside the service resolution, as upstream's wrapper is outside its
	// dialer: annotations name the URL's host (<service>.<namespace>.svc).
	rt = c.x509.Wrap(rt)
	return &hookClient{client: &http.Client{Transport: rt}, transport: transport, url: u.String()}, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// post sends a review with the webhook's timeout (the timeout query
// parameter tells the webhook, as upstream's client does).
func (hc *hookClient) post(ctx context.Context, body []byte, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := hc.url
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	u += sep + "timeout=" + url.QueryEscape(timeout.String())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, */*")
	resp, err := hc.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxResponseBytes {
		return nil, fmt.Errorf("response is larger than %d bytes", maxResponseBytes)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &statusError{code: resp.StatusCode, body: data}
	}
	return data, nil
}

// statusError is a webhook's non-2xx answer.
type statusError struct {
	code int
	body []byte
}

func (e *statusError) Error() string {
	b := strings.TrimSpace(string(e.body))
	if len(b) > 1024 {
		b = b[:1024]
	}
	if b == "" {
		b = http.StatusText(e.code)
	}
	return fmt.Sprintf("the server responded with the status code %d but did not return more information: %s", e.code, b)
}
