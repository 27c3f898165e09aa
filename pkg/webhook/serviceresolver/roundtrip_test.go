package serviceresolver

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/auth/pki"
)

// listerResolver resolves through Resolve on a Lister, as kapi's server
// does.
type listerResolver struct{ l Lister }

func (r listerResolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	return Resolve(context.Background(), r.l, namespace, name, port)
}

// switchable is a Lister whose service and slices can be replaced.
type switchable struct{ cur atomic.Pointer[lister] }

func (s *switchable) GetService(ctx context.Context, ns, name string) (*corev1.Service, error) {
	return s.cur.Load().GetService(ctx, ns, name)
}

func (s *switchable) ListEndpointSlices(ctx context.Context, ns, name string) ([]discoveryv1.EndpointSlice, error) {
	return s.cur.Load().ListEndpointSlices(ctx, ns, name)
}

func (s *switchable) GetEndpoints(ctx context.Context, ns, name string) (*corev1.Endpoints, error) {
	return s.cur.Load().GetEndpoints(ctx, ns, name)
}

// seenRequest is what a test webhook saw.
type seenRequest struct{ server, host, path string }

// serveTLS serves on 127.0.0.1 with cert, reporting each request to seen
// tagged with name; it returns the port.
func serveTLS(t *testing.T, name string, cert tls.Certificate, seen chan<- seenRequest) int32 {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- seenRequest{server: name, host: r.Host, path: r.URL.Path}
		_, _ = io.WriteString(w, "ok")
	}), ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return int32(ln.Addr().(*net.TCPAddr).Port)
}

// A webhook client for the service webhooks/hook reaches, through an
// ExternalName Service pointing at localhost, a server on 127.0.0.1 at
// the reference's port, verified as hook.webhooks.svc, with that host in
// the Host header; the next request follows the Service as it is then.
func TestRoundTripperExternalName(t *testing.T) {
	bundle, err := pki.Ensure(pki.Config{Hosts: []string{"hook.webhooks.svc"}})
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan seenRequest, 4)
	port := serveTLS(t, "first", bundle.Serving, seen)
	secondPort := serveTLS(t, "second", bundle.Serving, seen)

	services := &switchable{}
	services.cur.Store(&lister{svc: &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "webhooks", Name: "hook"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"},
	}})
	client := &http.Client{Transport: &RoundTripper{
		Next: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: bundle.CAPool, ServerName: ServerName("webhooks", "hook"), MinVersion: tls.VersionTLS12,
		}},
		Resolver:  listerResolver{services},
		Namespace: "webhooks", Name: "hook", Port: port,
	}}
	host := HostPort("webhooks", "hook", port)
	post := func() seenRequest {
		t.Helper()
		resp, err := client.Post("https://"+host+"/convert", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatalf("post: %v", err)
		}
		_ = resp.Body.Close()
		return <-seen
	}
	if got, want := post(), (seenRequest{"first", host, "/convert"}); got != want {
		t.Errorf("through ExternalName localhost: got %+v, want %+v", got, want)
	}

	// The Service becomes a ClusterIP one with an endpoint (a lister
	// without validation: kapi's API refuses loopback endpoints).
	services.cur.Store(&lister{
		svc: &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "webhooks", Name: "hook"},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{Name: "https", Port: port}}},
		},
		slices: []discoveryv1.EndpointSlice{slice(discoveryv1.AddressTypeIPv4, "https", secondPort, ptr.To(true), "127.0.0.1")},
	})
	if got, want := post(), (seenRequest{"second", host, "/convert"}); got != want {
		t.Errorf("after the Service changed: got %+v, want %+v", got, want)
	}
}

// The backend is verified as <service>.<namespace>.svc, not as the
// external name: a certificate for localhost only is refused.
func TestRoundTripperVerifiesServiceName(t *testing.T) {
	bundle, err := pki.Ensure(pki.Config{}) // localhost and 127.0.0.1, not hook.webhooks.svc
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan seenRequest, 1)
	port := serveTLS(t, "only", bundle.Serving, seen)
	client := &http.Client{Transport: &RoundTripper{
		Next: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: bundle.CAPool, ServerName: ServerName("webhooks", "hook"), MinVersion: tls.VersionTLS12,
		}},
		Resolver: listerResolver{lister{svc: &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "webhooks", Name: "hook"},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"},
		}}},
		Namespace: "webhooks", Name: "hook", Port: port,
	}}
	resp, err := client.Get("https://" + HostPort("webhooks", "hook", port) + "/")
	if err == nil {
		_ = resp.Body.Close()
		t.Fatal("got an answer, want a certificate error for hook.webhooks.svc")
	}
	if !strings.Contains(err.Error(), "hook.webhooks.svc") || !strings.Contains(err.Error(), "x509") {
		t.Errorf("got %v, want an x509 error naming hook.webhooks.svc", err)
	}
	select {
	case r := <-seen:
		t.Errorf("the server saw %+v, want no request", r)
	default:
	}
}

// recorder is a RoundTripper that records the request it gets.
type recorder struct{ got *http.Request }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.got = req
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
}

// resolverFunc adapts a function to EndpointResolver.
type resolverFunc func(namespace, name string, port int32) (*url.URL, error)

func (f resolverFunc) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	return f(namespace, name, port)
}

// closeTracker is a request body that records being closed.
type closeTracker struct {
	io.Reader
	closed bool
}

func (c *closeTracker) Close() error { c.closed = true; return nil }

func TestRoundTripperErrors(t *testing.T) {
	tests := []struct {
		name    string
		resolve resolverFunc
		wantErr string
	}{
		{"resolver fails", func(string, string, int32) (*url.URL, error) { return nil, errors.New(`services "hook" not found`) }, `services "hook" not found`},
		{"no url", func(string, string, int32) (*url.URL, error) { return nil, nil }, "service webhooks/hook resolved to no address"},
		{"no host", func(string, string, int32) (*url.URL, error) { return &url.URL{Scheme: "https"}, nil }, "service webhooks/hook resolved to no address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := &recorder{}
			rt := &RoundTripper{Next: next, Resolver: tt.resolve, Namespace: "webhooks", Name: "hook", Port: 443}
			body := &closeTracker{Reader: strings.NewReader("{}")}
			req, err := http.NewRequest(http.MethodPost, "https://hook.webhooks.svc:443/", body)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := rt.RoundTrip(req)
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("got %v %v, want error %q", resp, err, tt.wantErr)
			}
			if next.got != nil {
				t.Error("the request reached the next transport")
			}
			if !body.closed {
				t.Error("the request body was not closed")
			}
		})
	}
}

// Requests for other hosts pass through unchanged; the service's host is
// rewritten to the resolved address with the Host header kept.
func TestRoundTripperHosts(t *testing.T) {
	next := &recorder{}
	calls := 0
	rt := &RoundTripper{Next: next, Namespace: "webhooks", Name: "hook", Port: 8443,
		Resolver: resolverFunc(func(ns, name string, port int32) (*url.URL, error) {
			calls++
			return &url.URL{Scheme: "https", Host: net.JoinHostPort("localhost", strconv.Itoa(int(port)))}, nil
		})}
	for _, tt := range []struct{ url, wantURLHost, wantHost string }{
		{"https://elsewhere.example.com/x", "elsewhere.example.com", ""},
		{"https://hook.webhooks.svc:443/x", "hook.webhooks.svc:443", ""}, // another port: another host
		{"https://hook.webhooks.svc:8443/x", "localhost:8443", "hook.webhooks.svc:8443"},
	} {
		req, err := http.NewRequest(http.MethodGet, tt.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = ""
		if _, err := rt.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		if next.got.URL.Host != tt.wantURLHost || next.got.Host != tt.wantHost || next.got.URL.Path != "/x" {
			t.Errorf("%s: got URL host %q Host %q path %q, want %q %q /x", tt.url, next.got.URL.Host, next.got.Host, next.got.URL.Path, tt.wantURLHost, tt.wantHost)
		}
		if req.URL.Host != strings.Split(strings.TrimPrefix(tt.url, "https://"), "/")[0] {
			t.Errorf("%s: the caller's request was modified (URL host %q)", tt.url, req.URL.Host)
		}
	}
	if calls != 1 {
		t.Errorf("got %d resolutions, want 1 (for the service's host only)", calls)
	}
}
