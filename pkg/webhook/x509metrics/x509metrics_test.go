package x509metrics

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/kapi-dev/kapi/internal/testx509"
	"github.com/kapi-dev/kapi/pkg/audit"
)

// certs is a CA and a serving certificate it signed.
type certs struct {
	caPool *x509.CertPool
	leaf   tls.Certificate
}

// newCerts makes a SHA-256 self-signed RSA CA and a leaf for "localhost"
// signed by it with alg: with SANs (DNS localhost, IP 127.0.0.1) unless
// cnOnly, when its only name is its Common Name.
func newCerts(t *testing.T, alg x509.SignatureAlgorithm, cnOnly bool) certs {
	t.Helper()
	ca := testx509.NewCA(t, "x509metrics-test-ca", testx509.RSA)
	names := testx509.SAN("localhost", net.ParseIP("127.0.0.1"))
	if cnOnly {
		names = testx509.CNOnly
	}
	return certs{caPool: ca.Pool(), leaf: *ca.Leaf(t, "localhost", alg, names)}
}

// serve starts a TLS server on 127.0.0.1 presenting c.leaf.
func serve(t *testing.T, c certs) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{c.leaf}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func TestCreateSHA1Certificate(t *testing.T) {
	// Go 1.26 still signs with SHA-1 (it only refuses to verify such
	// signatures in chains): the tests' SHA-1 leaves are real.
	c := newCerts(t, x509.SHA1WithRSA, false)
	leaf, err := x509.ParseCertificate(c.leaf.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if leaf.SignatureAlgorithm != x509.SHA1WithRSA {
		t.Fatalf("leaf signed with %v", leaf.SignatureAlgorithm)
	}
}

func TestRoundTrip(t *testing.T) {
	good := newCerts(t, x509.SHA256WithRSA, false)
	cnOnly := newCerts(t, x509.SHA256WithRSA, true)
	sha1 := newCerts(t, x509.SHA1WithRSA, false)
	both := newCerts(t, x509.SHA1WithRSA, true)
	for _, tc := range []struct {
		name        string
		certs       certs
		insecure    bool
		wantErr     string // "" : the request succeeds
		san, sha1   float64
		annotations map[string]string
	}{
		{name: "valid", certs: good},
		{name: "valid, not verified", certs: good, insecure: true},
		{
			name: "no SAN", certs: cnOnly,
			wantErr: "x509: certificate relies on legacy Common Name field, use SANs instead",
			san:     1,
			annotations: map[string]string{
				"missing-san.invalid-cert.kubernetes.io/localhost": "relies on a legacy Common Name field instead of the SAN extension for subject validation",
			},
		},
		{
			name: "SHA-1", certs: sha1,
			wantErr: `x509: certificate signed by unknown authority (possibly because of "x509: cannot verify signature: insecure algorithm SHA1-RSA" while trying to verify candidate authority certificate "x509metrics-test-ca")`,
			sha1:    1,
			annotations: map[string]string{
				"insecure-sha1.invalid-cert.kubernetes.io/localhost": "uses an insecure SHA-1 signature",
			},
		},
		{
			// Verification checks the name first: only the SAN error.
			name: "no SAN and SHA-1", certs: both,
			wantErr: "x509: certificate relies on legacy Common Name field, use SANs instead",
			san:     1,
			annotations: map[string]string{
				"missing-san.invalid-cert.kubernetes.io/localhost": "relies on a legacy Common Name field instead of the SAN extension for subject validation",
			},
		},
		{name: "no SAN, not verified", certs: cnOnly, insecure: true, san: 1, annotations: map[string]string{
			"missing-san.invalid-cert.kubernetes.io/localhost": "relies on a legacy Common Name field instead of the SAN extension for subject validation",
		}},
		{name: "SHA-1, not verified", certs: sha1, insecure: true, sha1: 1, annotations: map[string]string{
			"insecure-sha1.invalid-cert.kubernetes.io/localhost": "uses an insecure SHA-1 signature",
		}},
		{name: "no SAN and SHA-1, not verified", certs: both, insecure: true, san: 1, sha1: 1, annotations: map[string]string{
			"missing-san.invalid-cert.kubernetes.io/localhost":   "relies on a legacy Common Name field instead of the SAN extension for subject validation",
			"insecure-sha1.invalid-cert.kubernetes.io/localhost": "uses an insecure SHA-1 signature",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, tc.certs)
			reg := prometheus.NewRegistry()
			counters, err := NewWebhookCounters(reg, nil)
			if err != nil {
				t.Fatal(err)
			}
			tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: tc.certs.caPool, InsecureSkipVerify: tc.insecure}} //nolint:gosec // the insecure cases
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: counters.Wrap(tr)}
			ctx := audit.WithContext(context.Background())
			u := "https://localhost:" + srv.URL[strings.LastIndex(srv.URL, ":")+1:] + "/"
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Do(req)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				_ = resp.Body.Close()
			} else {
				var ve *tls.CertificateVerificationError
				if err == nil || !errors.As(err, &ve) || ve.Err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want a certificate verification error %q", err, tc.wantErr)
				}
			}
			if got := counterValue(t, counters.missingSAN); got != tc.san {
				t.Errorf("missing SAN count %v, want %v", got, tc.san)
			}
			if got := counterValue(t, counters.insecureSHA1); got != tc.sha1 {
				t.Errorf("SHA-1 count %v, want %v", got, tc.sha1)
			}
			got := audit.FromContext(ctx).Annotations()
			if len(got) != len(tc.annotations) {
				t.Errorf("annotations %v, want %v", got, tc.annotations)
			}
			for k, v := range tc.annotations {
				if got[k] != v {
					t.Errorf("annotation %s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

// TestSelfSignedSHA1 checks that a self-signed SHA-1 certificate (a root)
// does not count, as upstream: the deprecation is about signatures made
// by an issuer.
func TestSelfSignedSHA1(t *testing.T) {
	cert := testx509.SelfSigned(t, "localhost", testx509.RSA, x509.SHA1WithRSA, testx509.SAN("localhost")).Leaf
	if sha1Signed([]*x509.Certificate{cert}) {
		t.Error("a self-signed SHA-1 certificate counted")
	}
	if !hasSANExtension(cert) {
		t.Error("a certificate with DNS names has no SAN extension")
	}
}

// TestErrorsOtherThanCertificates: other failures (nothing listening, a
// name the certificate does not have) count nothing.
func TestErrorsOtherThanCertificates(t *testing.T) {
	cnOnly := newCerts(t, x509.SHA256WithRSA, true)
	srv := serve(t, cnOnly)
	counters, err := NewWebhookCounters(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cnOnly.caPool}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: counters.Wrap(tr)}
	// 127.0.0.1 is not the Common Name "localhost": not a legacy-CN error.
	resp, err := client.Get(srv.URL)
	if err == nil {
		_ = resp.Body.Close()
		t.Fatal("a CN-only certificate verified for 127.0.0.1")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	if resp, err := client.Get("https://" + addr + "/"); err == nil {
		_ = resp.Body.Close()
		t.Fatal("a closed port answered")
	}
	if s, h := counterValue(t, counters.missingSAN), counterValue(t, counters.insecureSHA1); s != 0 || h != 0 {
		t.Errorf("counts %v, %v; want 0, 0", s, h)
	}
}

func TestNil(t *testing.T) {
	var c *Counters
	tr := &http.Transport{}
	if c.Wrap(tr) != http.RoundTripper(tr) {
		t.Error("a nil *Counters wrapped")
	}
}

// TestExposition checks the families' text as kube-apiserver v1.37.2
// serves them (lines copied from the reference's /metrics).
func TestExposition(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := NewWebhookCounters(reg, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := NewAggregatorCounters(reg, nil); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	want := `# HELP apiserver_kube_aggregator_x509_insecure_sha1_total [ALPHA] Counts the number of requests to servers with insecure SHA1 signatures in their serving certificate OR the number of connection failures due to the insecure SHA1 signatures (either/or, based on the runtime environment)
# TYPE apiserver_kube_aggregator_x509_insecure_sha1_total counter
apiserver_kube_aggregator_x509_insecure_sha1_total 0
# HELP apiserver_kube_aggregator_x509_missing_san_total [ALPHA] Counts the number of requests to servers missing SAN extension in their serving certificate OR the number of connection failures due to the lack of x509 certificate SAN extension missing (either/or, based on the runtime environment)
# TYPE apiserver_kube_aggregator_x509_missing_san_total counter
apiserver_kube_aggregator_x509_missing_san_total 0
# HELP apiserver_webhooks_x509_insecure_sha1_total [BETA] Counts the number of requests to servers with insecure SHA1 signatures in their serving certificate OR the number of connection failures due to the insecure SHA1 signatures (either/or, based on the runtime environment)
# TYPE apiserver_webhooks_x509_insecure_sha1_total counter
apiserver_webhooks_x509_insecure_sha1_total 0
# HELP apiserver_webhooks_x509_missing_san_total [BETA] Counts the number of requests to servers missing SAN extension in their serving certificate OR the number of connection failures due to the lack of x509 certificate SAN extension missing (either/or, based on the runtime environment)
# TYPE apiserver_webhooks_x509_missing_san_total counter
apiserver_webhooks_x509_missing_san_total 0
`
	if b.String() != want {
		t.Errorf("exposition:\n%s\nwant:\n%s", b.String(), want)
	}
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 1)
	c.Collect(ch)
	m := <-ch
	out := &dto.Metric{}
	if err := m.Write(out); err != nil {
		t.Fatal(err)
	}
	return out.GetCounter().GetValue()
}
