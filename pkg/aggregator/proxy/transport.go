package proxy

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kapi-dev/kapi/pkg/webhook/serviceresolver"
)

// DefaultDialTimeout bounds connecting to a backend (upstream's dialer's).
const DefaultDialTimeout = 30 * time.Second

// Transport is how the aggregator talks to one APIService's backend: TLS
// verified against the APIService's caBundle (the system roots if empty)
// with server name <service>.<namespace>.svc, or not verified at all with
// insecureSkipTLSVerify; the front-proxy client certificate presented.
// It adds no identity headers.
type Transport struct {
	// http may use HTTP/2; upgrade is HTTP/1.1 only (connection upgrades
	// do not exist in HTTP/2).
	http    *http.Transport
	upgrade *http.Transport
}

// NewTransport builds the transport of svc, a non-local APIService.
// clientCert (nil: none) is presented to the backend; dialTimeout (0:
// [DefaultDialTimeout]) bounds connecting. An unusable caBundle is an
// error, as in client-go.
func NewTransport(svc *apiregistrationv1.APIService, clientCert *tls.Certificate, dialTimeout time.Duration) (*Transport, error) {
	if svc.Spec.Service == nil {
		return nil, errors.New("local APIServices have no transport")
	}
	if dialTimeout <= 0 {
		dialTimeout = DefaultDialTimeout
	}
	tlsConfig := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         serviceresolver.ServerName(svc.Spec.Service.Namespace, svc.Spec.Service.Name),
		InsecureSkipVerify: svc.Spec.InsecureSkipTLSVerify, //nolint:gosec // the APIService asks for it
	}
	if len(svc.Spec.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(svc.Spec.CABundle) {
			return nil, fmt.Errorf("unable to load root certificates: unable to parse bytes as PEM block")
		}
		tlsConfig.RootCAs = pool
	}
	if clientCert != nil {
		cert := clientCert
		tlsConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	dialer := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	base := func() *http.Transport {
		return &http.Transport{
			Proxy:                 nil, // backends are reached directly
			DialContext:           dialer.DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			IdleConnTimeout:       90 * time.Second,
			MaxIdleConnsPerHost:   25,
			ExpectContinueTimeout: time.Second,
		}
	}
	h := base()
	h.TLSClientConfig = tlsConfig.Clone()
	h.ForceAttemptHTTP2 = true
	u := base()
	u.TLSClientConfig = tlsConfig.Clone()
	u.TLSClientConfig.NextProtos = []string{"http/1.1"}
	u.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{} // no HTTP/2
	return &Transport{http: h, upgrade: u}, nil
}

// RoundTripper returns the transport for ordinary requests (HTTP/2
// allowed).
func (t *Transport) RoundTripper() http.RoundTripper { return t.http }

// UpgradeRoundTripper returns the HTTP/1.1-only transport for upgrade
// requests.
func (t *Transport) UpgradeRoundTripper() http.RoundTripper { return t.upgrade }

// CloseIdleConnections closes the idle connections of both transports;
// called when the transport is replaced or its APIService goes.
func (t *Transport) CloseIdleConnections() {
	t.http.CloseIdleConnections()
	t.upgrade.CloseIdleConnections()
}
