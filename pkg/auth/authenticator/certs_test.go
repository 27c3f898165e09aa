package authenticator

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log/slog"
	"math/big"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/pkg/auth/pki"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// testBundle is a generated kapi PKI, in memory.
func testBundle(t testing.TB) *pki.Bundle {
	t.Helper()
	b, err := pki.Ensure(pki.Config{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// issued is a certificate with its key, for building test chains.
type issued struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// issue creates a certificate from tmpl signed by parent (nil: self-signed).
func issue(t testing.TB, tmpl *x509.Certificate, parent *issued) *issued {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sn, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = sn.Add(sn, big.NewInt(1))
	if tmpl.NotBefore.IsZero() {
		tmpl.NotBefore = time.Now().Add(-time.Hour)
	}
	if tmpl.NotAfter.IsZero() {
		tmpl.NotAfter = time.Now().Add(time.Hour)
	}
	tmpl.BasicConstraintsValid = true
	parentCert, parentKey := tmpl, crypto.Signer(key)
	if parent != nil {
		parentCert, parentKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parentCert, key.Public(), parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &issued{cert: cert, key: key}
}

func caTemplate(cn string) *x509.Certificate {
	return &x509.Certificate{
		Subject:  pkix.Name{CommonName: cn},
		IsCA:     true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
}

func clientTemplate(cn string, orgs ...string) *x509.Certificate {
	return &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn, Organization: orgs},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
}
