package requestheader

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/pkg/auth/authenticator"
	"github.com/kapi-dev/kapi/pkg/auth/internal/certtest"
	"github.com/kapi-dev/kapi/pkg/auth/pki"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func caTemplate(cn string) *x509.Certificate {
	return &x509.Certificate{
		Subject:  pkix.Name{CommonName: cn},
		IsCA:     true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
}

func clientTemplate(cn string) *x509.Certificate {
	return &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
}

// fixture is kapi's generated PKI plus certificates made to go wrong.
type fixture struct {
	bundle *pki.Bundle
	// proxy is the generated front-proxy client pair; admin the generated
	// admin pair (cluster CA).
	proxy, admin *tls.Certificate
	// fpCA is the generated front-proxy CA with its key, to sign more.
	fpCA *certtest.Issued
	// otherRoot and otherInter form an unrelated chain.
	otherRoot, otherInter *certtest.Issued
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	b, err := pki.Ensure(pki.Config{Dir: t.TempDir(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	fpCA, err := tls.LoadX509KeyPair(b.Files.FrontProxyCACert, b.Files.FrontProxyCAKey)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := tls.X509KeyPair(b.AdminCertPEM, b.AdminKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{
		bundle: b,
		proxy:  &b.ProxyClient,
		admin:  &admin,
		fpCA:   &certtest.Issued{Cert: fpCA.Leaf, Key: fpCA.PrivateKey.(crypto.Signer)},
	}
	f.otherRoot = certtest.Issue(t, caTemplate("other-root"), nil)
	f.otherInter = certtest.Issue(t, caTemplate("other-intermediate"), f.otherRoot)
	return f
}

// result is what the authenticator said inside a real TLS server.
type result struct {
	user *user.Info
	ok   bool
	err  error
	// left are the request's headers after authentication.
	left http.Header
}

// do sends one GET with hdr, presenting cert (nil: none), to a TLS server
// that asks for (but does not itself verify) client certificates, as
// kube-apiserver does, and runs auth on the request there.
func (f *fixture) do(t testing.TB, auth authenticator.Request, cert *tls.Certificate, hdr http.Header) result {
	t.Helper()
	got := make(chan result, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok, err := auth.AuthenticateRequest(r)
		got <- result{user: u, ok: ok, err: err, left: r.Header.Clone()}
	}))
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{f.bundle.Serving},
		ClientAuth:   tls.RequestClientCert,
	}
	srv.StartTLS()
	defer srv.Close()

	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: f.bundle.CAPool}}
	if cert != nil {
		tr.TLSClientConfig.Certificates = []tls.Certificate{*cert}
	}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/api", nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range hdr {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case r := <-got:
		return r
	default:
		t.Fatal("handler did not run")
		return result{}
	}
}

// remote lists the X-Remote-* headers of h (and X-Keep, which must
// survive), for comparisons.
func remote(h http.Header) http.Header {
	out := http.Header{}
	for k, v := range h {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "x-remote-") || strings.HasPrefix(lk, "x-other-") || lk == "x-keep" {
			out[k] = v
		}
	}
	return out
}

// hdr builds a header from name, value pairs, each pair one line.
func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func mustNew(t testing.TB, cfg Config) authenticator.Request {
	t.Helper()
	a, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}
