package pki

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"slices"
	"strings"
	"testing"
)

func TestEnsureFrontProxy(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  bool
	}{{"on disk", true}, {"in memory", false}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{}
			if tc.dir {
				cfg.Dir = t.TempDir()
			}
			b := ensure(t, cfg)

			fp := b.FrontProxyCA
			if fp == nil || !fp.IsCA || !fp.MaxPathLenZero {
				t.Fatalf("FrontProxyCA = %v, want a CA that signs leaves only", fp)
			}
			if fp.Equal(b.CA) || bytes.Equal(fp.SubjectKeyId, b.CA.SubjectKeyId) {
				t.Errorf("front-proxy CA is the cluster CA, want a separate one")
			}
			if !strings.HasPrefix(fp.Subject.CommonName, "kapi-front-proxy-ca@") {
				t.Errorf("front-proxy CA CN = %q, want kapi-front-proxy-ca@<unix>", fp.Subject.CommonName)
			}
			if !bytes.Equal(b.FrontProxyCAPEM, encodeCert(fp.Raw)) {
				t.Errorf("FrontProxyCAPEM does not encode FrontProxyCA")
			}

			leaf := b.ProxyClient.Leaf
			if leaf == nil || len(b.ProxyClient.Certificate) != 1 || !bytes.Equal(b.ProxyClient.Certificate[0], leaf.Raw) {
				t.Fatalf("ProxyClient: want a one-certificate chain with Leaf set")
			}
			if got := leaf.Subject.CommonName; got != FrontProxyClientName {
				t.Errorf("proxy client CN = %q, want %q", got, FrontProxyClientName)
			}
			if len(leaf.Subject.Organization) != 0 {
				t.Errorf("proxy client O = %v, want none", leaf.Subject.Organization)
			}
			if got := leaf.ExtKeyUsage; !slices.Equal(got, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}) {
				t.Errorf("proxy client EKU = %v, want [clientAuth]", got)
			}
			if !bytes.Equal(leaf.AuthorityKeyId, fp.SubjectKeyId) {
				t.Errorf("proxy client AKID = %x, want the front-proxy CA's SKID %x", leaf.AuthorityKeyId, fp.SubjectKeyId)
			}

			clientAuth := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
			verifies := func(c *x509.Certificate, pool *x509.CertPool) bool {
				_, err := c.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: clientAuth})
				return err == nil
			}
			admin, err := tlsPair(b.AdminCertPEM, b.AdminKeyPEM)
			if err != nil {
				t.Fatal(err)
			}
			checks := []struct {
				what string
				cert *x509.Certificate
				pool *x509.CertPool
				want bool
			}{
				{"proxy client against front-proxy CA", leaf, b.FrontProxyCAPool, true},
				{"proxy client against cluster CA", leaf, b.CAPool, false},
				{"admin against front-proxy CA", admin.Leaf, b.FrontProxyCAPool, false},
				{"admin against cluster CA", admin.Leaf, b.CAPool, true},
			}
			for _, c := range checks {
				if got := verifies(c.cert, c.pool); got != c.want {
					t.Errorf("%s verifies = %v, want %v", c.what, got, c.want)
				}
			}
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: b.FrontProxyCAPool}); err == nil {
				t.Errorf("proxy client verifies for server auth, want client auth only")
			}

			if !tc.dir {
				return
			}
			if got := readCert(t, b.Files.FrontProxyCACert); len(got) != 1 || !got[0].Equal(fp) {
				t.Errorf("%s does not hold exactly the front-proxy CA", FrontProxyCACertFile)
			}
			if got := readCert(t, b.Files.ProxyClientCert); len(got) != 1 || !got[0].Equal(leaf) {
				t.Errorf("%s does not hold exactly the proxy client leaf", FrontProxyClientCertFile)
			}
			loaded, err := LoadProxyClient(b.Files.ProxyClientCert, b.Files.ProxyClientKey)
			if err != nil {
				t.Fatalf("LoadProxyClient of the generated pair: %v", err)
			}
			if !loaded.Leaf.Equal(leaf) {
				t.Errorf("LoadProxyClient returned another certificate")
			}
			pool, err := LoadCAPool(b.Files.FrontProxyCACert)
			if err != nil {
				t.Fatal(err)
			}
			if !verifies(loaded.Leaf, pool) {
				t.Errorf("loaded proxy client does not verify against the loaded front-proxy CA file")
			}
			// The pair is usable as a TLS client certificate.
			if _, err := tls.X509KeyPair(mustRead(t, b.Files.ProxyClientCert), mustRead(t, b.Files.ProxyClientKey)); err != nil {
				t.Errorf("front-proxy client files are not a key pair: %v", err)
			}
		})
	}
}

func TestLoadProxyClientErrors(t *testing.T) {
	dir := t.TempDir()
	b := ensure(t, Config{Dir: dir})
	tests := []struct {
		name      string
		cert, key string
		wantErr   []string
	}{
		{name: "only key given", key: b.Files.ProxyClientKey, wantErr: []string{"proxy client certificate", "certificate and key must be supplied as a pair"}},
		{name: "missing key", cert: b.Files.ProxyClientCert, key: dir + "/nope.key", wantErr: []string{"read proxy client key", "nope.key"}},
		{name: "mismatched key", cert: b.Files.ProxyClientCert, key: b.Files.AdminKey, wantErr: []string{"load proxy client certificate", "does not match"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadProxyClient(tc.cert, tc.key)
			if err == nil {
				t.Fatalf("got no error, want one containing %q", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
