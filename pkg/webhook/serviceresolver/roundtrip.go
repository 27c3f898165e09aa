package serviceresolver

import (
	"fmt"
	"net/http"
	"net/url"
)

// EndpointResolver resolves a service reference to the URL that reaches
// it (only its host:port is used). It must be safe for concurrent use.
// kapi's implementation calls [Resolve] on the core server's Services.
type EndpointResolver interface {
	ResolveEndpoint(namespace, name string, port int32) (*url.URL, error)
}

// RoundTripper is the transport of a webhook client for a service
// reference. A request for [HostPort](Namespace, Name, Port) goes to the
// address Resolver gives for it at that moment (so endpoint and Service
// changes apply to the next request), with the URL's host kept as the
// Host header; requests for other hosts go to Next unchanged. The TLS
// server name is Next's business: set it to [ServerName].
type RoundTripper struct {
	Next            http.RoundTripper
	Resolver        EndpointResolver
	Namespace, Name string
	Port            int32
}

var _ http.RoundTripper = (*RoundTripper)(nil)

// RoundTrip implements http.RoundTripper. A resolution error is returned
// as is (net/http's client wraps it as `Post "<url>": <error>`).
func (t *RoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != HostPort(t.Namespace, t.Name, t.Port) {
		return t.Next.RoundTrip(req)
	}
	u, err := t.Resolver.ResolveEndpoint(t.Namespace, t.Name, t.Port)
	if err == nil && (u == nil || u.Host == "") {
		err = fmt.Errorf("service %s/%s resolved to no address", t.Namespace, t.Name)
	}
	if err != nil {
		// A RoundTripper closes the body, even on errors.
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	out := req.Clone(req.Context())
	if out.Host == "" {
		out.Host = req.URL.Host
	}
	out.URL.Host = u.Host
	return t.Next.RoundTrip(out)
}
