// Package x509metrics counts the requests kapi sends to webhooks and
// aggregated API servers whose serving certificates have a deprecated
// property: no subjectAltName extension (a name only in the legacy Common
// Name) or a SHA-1 signature. These are kube-apiserver's
// apiserver_webhooks_x509_{missing_san,insecure_sha1}_total (BETA: every
// webhook client: admission, CRD conversion, authorization and audit
// webhooks) and apiserver_kube_aggregator_x509_{missing_san,insecure_sha1}_total
// (ALPHA: the aggregator's proxy to APIService backends and its discovery
// and OpenAPI fetches, which upstream makes through the proxy handler; not
// its availability checks), with upstream's audit annotations on the
// request that caused the call (fetches have none).
//
// # When a request counts
//
// A [Counters.Wrap]ped RoundTripper looks at the outcome of each request,
// as k8s.io/apiserver's pkg/util/x509metrics does:
//
//   - a transport error counts as missing SAN when it is (or wraps) an
//     x509.HostnameError whose text says the certificate relies on the
//     legacy Common Name field (Go's answer when the name asked for is
//     only the certificate's Common Name and it has no SAN extension);
//   - a transport error counts as SHA-1 when it is (or wraps) an
//     x509.UnknownAuthorityError whose text, from "x509: cannot verify
//     signature: insecure algorithm" on, names SHA1 (Go's answer when the
//     only path to a trusted root goes through a SHA-1 signature: the
//     rejected signature is the error's hint);
//   - a response (any status) over TLS counts as missing SAN when the
//     leaf certificate has no SAN extension, and as SHA-1 when any
//     certificate the server sent is signed SHA1WithRSA or ECDSAWithSHA1
//     and is not self-signed (issuer and subject differ).
//
// With Go 1.26 verification refuses both kinds of certificate (the
// GODEBUG settings that allowed them, x509ignoreCN and x509sha1, are
// gone), so the response cases happen only when verification is off: an
// APIService with insecureSkipTLSVerify, a kubeconfig with
// insecure-skip-tls-verify for the authorization or audit webhook.
//
// Each count also logs, and adds the audit annotation
// "<id>.invalid-cert.kubernetes.io/<host>" = <reason> to the request's
// audit context (when there is one and the request URL has a host): id
// "missing-san" with reason "relies on a legacy Common Name field instead
// of the SAN extension for subject validation", id "insecure-sha1" with
// reason "uses an insecure SHA-1 signature". host is the request URL's
// host without the port as the wrapper sees it: a webhook's URL host or
// <service>.<namespace>.svc for a service reference (the wrapper sits
// outside the service resolution, as upstream's is outside its dialer),
// the resolved backend address for the aggregator (as upstream's proxy
// URL).
package x509metrics

import (
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kapi-dev/kapi/pkg/audit"
)

const (
	missingSANID     = "missing-san"
	missingSANReason = "relies on a legacy Common Name field instead of the SAN extension for subject validation"
	sha1ID           = "insecure-sha1"
	sha1Reason       = "uses an insecure SHA-1 signature"

	missingSANHelp = "Counts the number of requests to servers missing SAN extension " +
		"in their serving certificate OR the number of connection failures " +
		"due to the lack of x509 certificate SAN extension missing " +
		"(either/or, based on the runtime environment)"
	sha1Help = "Counts the number of requests to servers with insecure SHA1 signatures " +
		"in their serving certificate OR the number of connection failures " +
		"due to the insecure SHA1 signatures (either/or, based on the runtime environment)"
)

// Counters are one pair of the families. A nil *Counters wraps nothing.
type Counters struct {
	missingSAN, insecureSHA1 prometheus.Counter
	logger                   *slog.Logger
}

// NewWebhookCounters registers apiserver_webhooks_x509_missing_san_total
// and apiserver_webhooks_x509_insecure_sha1_total (BETA) on reg (nil: not
// registered) and returns them, for every webhook client of a server.
// logger (nil: slog's default) gets a line per count.
func NewWebhookCounters(reg prometheus.Registerer, logger *slog.Logger) (*Counters, error) {
	return newCounters(reg, logger, "webhooks", "[BETA] ")
}

// NewAggregatorCounters registers
// apiserver_kube_aggregator_x509_missing_san_total and
// apiserver_kube_aggregator_x509_insecure_sha1_total (ALPHA) on reg (nil:
// not registered), for the aggregator's proxy.
func NewAggregatorCounters(reg prometheus.Registerer, logger *slog.Logger) (*Counters, error) {
	return newCounters(reg, logger, "kube_aggregator", "[ALPHA] ")
}

func newCounters(reg prometheus.Registerer, logger *slog.Logger, subsystem, stability string) (*Counters, error) {
	if logger == nil {
		logger = slog.Default()
	}
	c := &Counters{
		missingSAN: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "apiserver", Subsystem: subsystem, Name: "x509_missing_san_total",
			Help: stability + missingSANHelp,
		}),
		insecureSHA1: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "apiserver", Subsystem: subsystem, Name: "x509_insecure_sha1_total",
			Help: stability + sha1Help,
		}),
		logger: logger,
	}
	if reg != nil {
		for _, m := range []prometheus.Collector{c.missingSAN, c.insecureSHA1} {
			if err := reg.Register(m); err != nil {
				return nil, fmt.Errorf("register %s x509 metrics: %w", subsystem, err)
			}
		}
	}
	return c, nil
}

// Wrap returns rt counting as the package documentation says (rt itself
// when c is nil). Its signature is client-go's transport.WrapperFunc, for
// rest.Config.Wrap.
func (c *Counters) Wrap(rt http.RoundTripper) http.RoundTripper {
	if c == nil || rt == nil {
		return rt
	}
	return &roundTripper{next: rt, c: c}
}

type roundTripper struct {
	next http.RoundTripper
	c    *Counters
}

// RoundTrip implements http.RoundTripper.
func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	switch {
	case err != nil:
		if legacyCNError(err) {
			t.c.count(req, t.c.missingSAN, missingSANID, missingSANReason)
		}
		if sha1Error(err) {
			t.c.count(req, t.c.insecureSHA1, sha1ID, sha1Reason)
		}
	case resp != nil && resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0:
		certs := resp.TLS.PeerCertificates
		if !hasSANExtension(certs[0]) {
			t.c.count(req, t.c.missingSAN, missingSANID, missingSANReason)
		}
		if sha1Signed(certs) {
			t.c.count(req, t.c.insecureSHA1, sha1ID, sha1Reason)
		}
	}
	return resp, err
}

// CloseIdleConnections passes on to the wrapped RoundTripper (http.Client
// calls it on its transport).
func (t *roundTripper) CloseIdleConnections() {
	if ci, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// Unwrap returns the wrapped RoundTripper.
func (t *roundTripper) Unwrap() http.RoundTripper { return t.next }

func (c *Counters) count(req *http.Request, counter prometheus.Counter, id, reason string) {
	if req != nil && req.URL != nil {
		if host := req.URL.Hostname(); host != "" {
			key := id + ".invalid-cert.kubernetes.io"
			c.logger.Info(key+": invalid certificate detected", "host", host, "reason", reason)
			audit.AddAnnotation(req.Context(), key+"/"+host, reason)
		}
	}
	counter.Inc()
}

func legacyCNError(err error) bool {
	var he x509.HostnameError
	if !errors.As(err, &he) {
		return false
	}
	return strings.Contains(err.Error(), "x509: certificate relies on legacy Common Name field")
}

func sha1Error(err error) bool {
	var ua x509.UnknownAuthorityError
	if !errors.As(err, &ua) {
		return false
	}
	msg := err.Error()
	i := strings.Index(msg, "x509: cannot verify signature: insecure algorithm")
	return i >= 0 && strings.Contains(msg[i:], "SHA1")
}

var oidSubjectAltName = asn1.ObjectIdentifier{2, 5, 29, 17}

func hasSANExtension(c *x509.Certificate) bool {
	for _, e := range c.Extensions {
		if e.Id.Equal(oidSubjectAltName) {
			return true
		}
	}
	return false
}

// sha1Signed reports whether a certificate of certs that is not
// self-signed (by name: its parsed issuer and subject differ, as upstream
// compares them) has a SHA-1 signature.
func sha1Signed(certs []*x509.Certificate) bool {
	for _, c := range certs {
		if (c.SignatureAlgorithm == x509.SHA1WithRSA || c.SignatureAlgorithm == x509.ECDSAWithSHA1) &&
			!reflect.DeepEqual(c.Issuer, c.Subject) {
			return true
		}
	}
	return false
}
